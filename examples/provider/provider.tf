provider "ray" {
  # Ray dashboard URL; defaults to RAY_ADDRESS, then http://127.0.0.1:8265.
  address = "http://127.0.0.1:8265"
  # Namespace of the placement groups the provider creates.
  namespace = "terraform-ray"
}
