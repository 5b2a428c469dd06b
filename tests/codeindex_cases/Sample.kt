package demo

typealias Handler = (String) -> Unit

interface Gateway {
    fun charge(amount: Int): Boolean
}

enum class Color {
    RED,
    GREEN
}

data class Point(val x: Int, var y: Int) {
    val norm: Int
        get() = x * x + y * y

    constructor(v: Int) : this(v, v) {
        println(v)
    }

    fun scale(k: Int): Point {
        return Point(x * k, y * k)
    }

    companion object {
        fun origin(): Point = Point(0, 0)
    }
}

object Registry {
    const val SIZE = 3
}

fun topLevel(): Int = 42
