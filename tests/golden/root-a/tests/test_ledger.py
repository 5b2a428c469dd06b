def test_ledger():
    pass
