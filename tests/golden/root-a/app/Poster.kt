class Poster {
  fun post() {}
}
