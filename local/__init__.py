"""Local stand-ins for the AWS data services: embedded Valkey, PostgreSQL and a Kafka broker."""
