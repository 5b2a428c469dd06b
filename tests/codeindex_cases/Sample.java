package demo;

import java.util.List;

/** A shape. */
public interface Shape {
    double area();
}

public class Circle implements Shape {
    private final double r, d;
    static final int SIDES = 0;

    public Circle(double r) {
        this.r = r;
        this.d = 2 * r;
    }

    @Override
    public double area() {
        return Math.PI * r * r;
    }

    enum Unit { CM, MM }
}

record Pair(int a, int b) {
    Pair {
        assert a <= b;
    }
}
