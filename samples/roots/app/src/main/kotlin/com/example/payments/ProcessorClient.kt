package com.example.payments

interface ProcessorClient {
    fun post(path: String, body: Any, idempotencyKey: String): ChargeResult
}

class HttpProcessorClient(private val baseUrl: String) : ProcessorClient {
    override fun post(path: String, body: Any, idempotencyKey: String): ChargeResult {
        // The processor rejects requests without the header with HTTP 400.
        TODO("wired in the service module")
    }
}
