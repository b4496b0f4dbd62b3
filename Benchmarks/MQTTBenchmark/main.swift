print("mqtt-benchmark")
