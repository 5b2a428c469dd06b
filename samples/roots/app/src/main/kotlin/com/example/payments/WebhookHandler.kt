package com.example.payments

import com.example.ledger.LedgerRepository

class WebhookHandler(private val ledger: LedgerRepository) {
    fun handle(event: WebhookEvent): Boolean {
        if (ledger.seen(event.id)) return true
        ledger.markSeen(event.id)
        return when (event.type) {
            "charge.succeeded" -> true
            "charge.failed" -> false
            else -> true
        }
    }
}

data class WebhookEvent(val id: String, val type: String)
