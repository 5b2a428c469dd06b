class PaymentGateway {
  fun charge() {}
}
