-- Local placeholder so the sequence is unbroken on this branch; fleet-core owns 0011. NOT COMMITTED.
SELECT 1;
