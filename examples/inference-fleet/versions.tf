terraform {
  required_version = ">= 1.8"
  required_providers {
    ray = {
      source = "registry.terraform.io/ray-infra/ray"
    }
  }
}
