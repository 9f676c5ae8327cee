output "engine_3_ports" {
  value = provider::ray::vllm_engine_port_range(3) # => { low = 7300, high = 7400, ... }
}
