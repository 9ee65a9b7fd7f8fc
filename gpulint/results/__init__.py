"""What a scan produces: findings, file reports, and the types a scan is configured with and returns."""
