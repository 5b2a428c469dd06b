<?php

namespace App\Jobs;

class SyncInventory
{
    public int $tries = 3;

    public function handle(): void
    {
        // pull the supplier's stock levels
    }
}
