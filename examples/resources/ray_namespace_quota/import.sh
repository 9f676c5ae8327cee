# A quota is imported by its Ray namespace.
terraform import ray_namespace_quota.team_a team-a
