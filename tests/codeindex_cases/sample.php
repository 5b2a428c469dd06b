<?php

namespace App\Billing;

interface Gateway
{
    public function charge(int $amount): bool;
}

trait Logs
{
    public function log(string $m): void
    {
        echo $m;
    }
}

class Payment implements Gateway
{
    use Logs;

    const LIMIT = 10;

    private int $count = 0;

    public function charge(int $amount): bool
    {
        return $amount > 0;
    }
}

function helper(int $x): int
{
    return $x + 1;
}
