<?php

namespace App\Models;

class Account
{
    public function invoices(): array
    {
        return Invoice::forAccount($this->id);
    }
}
