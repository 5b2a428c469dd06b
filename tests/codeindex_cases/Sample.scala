package demo

trait Shape {
  def area: Double
}

case class Square(side: Double) extends Shape {
  val sides = 4

  def area: Double = side * side
}

object Square {
  def unit(): Square = {
    Square(1.0)
  }
}

enum Color {
  case Red, Green
}

type Length = Double

def helper(x: Int): Int = x + 1
