import Foundation

protocol Shape {
    func area() -> Double
    var name: String { get }
}

struct Square: Shape {
    let side: Double
    var name: String { return "square" }

    init(side: Double) {
        self.side = side
    }

    func area() -> Double {
        return side * side
    }
}

enum Direction {
    case north, south
}

class Counter {
    var count = 0

    func increment() {
        count += 1
    }
}

extension Square {
    func perimeter() -> Double {
        return 4 * side
    }
}

typealias Length = Double

func helper(x: Int) -> Int {
    return x + 1
}
