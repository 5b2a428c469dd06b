use std::fmt;

pub const MAX: usize = 8;

#[derive(Debug)]
pub struct Stack {
    items: Vec<i32>,
}

pub enum Op {
    Push(i32),
    Pop,
}

pub trait Shape {
    fn area(&self) -> f64;
}

impl Stack {
    pub fn new() -> Self {
        Stack { items: Vec::new() }
    }

    pub fn push(&mut self, v: i32) {
        self.items.push(v);
    }
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:?}", self.items)
    }
}

type Pair = (i32, i32);

fn helper(x: i32) -> i32 {
    x + 1
}
