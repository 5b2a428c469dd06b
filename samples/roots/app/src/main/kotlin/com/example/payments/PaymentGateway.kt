package com.example.payments

import com.example.ledger.LedgerRepository
import java.time.Duration

/** Talks to the card processor; every call is idempotent by its request key. */
class PaymentGateway(
    private val client: ProcessorClient,
    private val ledger: LedgerRepository,
) {
    private val maxRetries = 2

    fun charge(request: ChargeRequest): ChargeResult {
        var attempt = 0
        while (true) {
            val result = client.post("/charges", request, idempotencyKey = request.key)
            if (result.ok || attempt >= maxRetries) {
                ledger.record(request, result)
                return result
            }
            attempt++
            Thread.sleep(backoff(attempt).toMillis())
        }
    }

    fun refund(chargeId: String, amountCents: Long): ChargeResult =
        client.post("/refunds", RefundRequest(chargeId, amountCents), idempotencyKey = chargeId)

    private fun backoff(attempt: Int): Duration = Duration.ofMillis(250L shl attempt)
}

data class ChargeRequest(val key: String, val amountCents: Long, val currency: String)

data class RefundRequest(val chargeId: String, val amountCents: Long)

data class ChargeResult(val ok: Boolean, val code: Int, val body: String)
