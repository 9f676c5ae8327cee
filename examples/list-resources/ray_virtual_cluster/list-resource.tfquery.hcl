# leaks.tfquery.hcl, beside a configuration holding `provider "ray" {}`:
#   terraform query                                  # list
#   terraform query -generate-config-out=adopted.tf  # import blocks and configuration
variable "owner_ids" {
  description = "owner_id of every cluster this state holds (terraform state show, or an output)."
  type        = list(string)
  default     = []
}

# Every virtual cluster of the provider's namespace, with the state import gives it.
list "ray_virtual_cluster" "all" {
  provider         = ray
  include_resource = true
}

# Only what no state owns or another state owns, named train-*.
list "ray_virtual_cluster" "leaked" {
  provider = ray
  config {
    name_prefix = "train-"
    ownership   = ["no_state", "other_state"]
    owner_ids   = var.owner_ids
  }
}

# Another Ray namespace, only because it is named here.
list "ray_virtual_cluster" "nemo" {
  provider = ray
  config {
    namespace = "nemo-rl"
  }
}
