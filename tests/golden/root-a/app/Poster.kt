class Poster {
  fun post() {}
}
// line 4
// line 5
// line 6
// line 7
// line 8
// line 9
// line 10
