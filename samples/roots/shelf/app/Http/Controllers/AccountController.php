<?php

namespace App\Http\Controllers;

use App\Models\Account;

class AccountController
{
    public function show(Account $account): array
    {
        return $account->invoices();
    }
}
