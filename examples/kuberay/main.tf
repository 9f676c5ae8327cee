# The Ray provider pointed at a KubeRay RayCluster: the dashboard address, the
# token and the CA come from Kubernetes through the kubernetes provider.
# Documentation only: not run by the tests (see the KubeRay guide).

variable "kube_namespace" {
  type    = string
  default = "ray"
}

variable "raycluster" {
  description = "Name of the RayCluster; KubeRay names its head Service <raycluster>-head-svc."
  type        = string
  default     = "raycluster-kuberay"
}

variable "dashboard_url" {
  description = "Dashboard URL when Terraform runs outside Kubernetes (Ingress, LoadBalancer, port-forward). Empty: the head Service's in-cluster DNS name."
  type        = string
  default     = ""
}

variable "token_secret_name" {
  description = "Secret holding the Ray auth token (RAY_AUTH_MODE=token). Empty: no token authentication."
  type        = string
  default     = ""
}

variable "token_secret_key" {
  type    = string
  default = "auth_token"
}

variable "ca_secret_name" {
  description = "Secret holding the CA certificate of the dashboard's TLS endpoint. Empty: plain HTTP, or HTTPS verified against the system roots."
  type        = string
  default     = ""
}

variable "ca_secret_key" {
  type    = string
  default = "ca.crt"
}

provider "kubernetes" {
  config_path = "~/.kube/config"
}

data "kubernetes_service_v1" "head" {
  metadata {
    name      = "${var.raycluster}-head-svc"
    namespace = var.kube_namespace
  }
}

data "kubernetes_secret_v1" "ray_token" {
  count = var.token_secret_name == "" ? 0 : 1
  metadata {
    name      = var.token_secret_name
    namespace = var.kube_namespace
  }
}

data "kubernetes_secret_v1" "ray_ca" {
  count = var.ca_secret_name == "" ? 0 : 1
  metadata {
    name      = var.ca_secret_name
    namespace = var.kube_namespace
  }
}

locals {
  head           = data.kubernetes_service_v1.head
  dashboard_port = one([for p in local.head.spec[0].port : p.port if p.name == "dashboard"])
  in_cluster_url = "http://${local.head.metadata[0].name}.${var.kube_namespace}.svc.cluster.local:${local.dashboard_port}"
}

provider "ray" {
  address = var.dashboard_url != "" ? var.dashboard_url : local.in_cluster_url
  token   = var.token_secret_name == "" ? null : data.kubernetes_secret_v1.ray_token[0].data[var.token_secret_key]
  ca_pem  = var.ca_secret_name == "" ? null : data.kubernetes_secret_v1.ray_ca[0].data[var.ca_secret_key]
}

data "ray_cluster_topology" "all" {
  include_nodes = true
}

output "ray_version" {
  value = data.ray_cluster_topology.all.ray_version
}

output "nodes" {
  description = "Every alive Ray node of the RayCluster with its NVLink domain and topo_rank."
  value       = [for n in data.ray_cluster_topology.all.nodes : "${n.node_ip} ${n.nvlink_domain} ${n.topo_rank}"]
}
