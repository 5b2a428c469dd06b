class Foo
