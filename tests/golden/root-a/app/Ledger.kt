class Ledger {
  fun post() {}
}
