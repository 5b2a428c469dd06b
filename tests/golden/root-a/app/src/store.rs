struct LedgerStore;
