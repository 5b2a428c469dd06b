const VERSION = "1.0";

class Animal {
  legs = 4;

  speak() {
    return "...";
  }
}

function* counter() {
  yield 1;
}

const add = (a, b) => {
  return a + b;
};

function main() {
  return add(1, 2);
}
