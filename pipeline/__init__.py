"""pubproof.pipeline: captured MQTT traffic checked against the model, at scale (PySpark)."""
