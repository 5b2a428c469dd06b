#include <string>

namespace geo {

class Shape {
public:
    virtual double area() const = 0;
    int sides;
};

class Square : public Shape {
public:
    explicit Square(double s) : side(s) {}
    double area() const override { return side * side; }

private:
    double side;
};

double Shape_total(const Shape &s);

}  // namespace geo

template <typename T>
T twice(T v) {
    return v + v;
}

double geo::Shape_total(const geo::Shape &s) {
    return s.area();
}

using Name = std::string;
