class Foo2
