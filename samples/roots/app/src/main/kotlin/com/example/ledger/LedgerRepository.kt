package com.example.ledger

import com.example.payments.ChargeRequest
import com.example.payments.ChargeResult

/** Writes through the cache to Postgres; reads hit the cache first. */
class LedgerRepository(private val cache: LedgerCache, private val db: LedgerDb) {
    fun record(request: ChargeRequest, result: ChargeResult) {
        db.insert(request.key, request.amountCents, result.code)
        cache.put(request.key, result.code)
    }

    fun seen(eventId: String): Boolean = cache.contains("evt:$eventId") || db.hasEvent(eventId)

    fun markSeen(eventId: String) {
        db.insertEvent(eventId)
        cache.put("evt:$eventId", 1)
    }
}

interface LedgerCache {
    fun put(key: String, value: Int)
    fun contains(key: String): Boolean
}

interface LedgerDb {
    fun insert(key: String, amountCents: Long, code: Int)
    fun hasEvent(eventId: String): Boolean
    fun insertEvent(eventId: String)
}
