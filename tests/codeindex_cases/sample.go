package demo

import "fmt"

const Limit = 10

type Reader interface {
	Read(p []byte) (int, error)
}

type Buffer struct {
	data []byte
	pos  int
}

type Name = string

func (b *Buffer) Read(p []byte) (int, error) {
	n := copy(p, b.data[b.pos:])
	b.pos += n
	return n, nil
}

func NewBuffer(data []byte) *Buffer {
	fmt.Println("new")
	return &Buffer{data: data}
}
