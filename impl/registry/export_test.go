package registry

// ShardOf exposes the shard a pointer hashes to, so that the external
// tests can place names on the shards a race needs.
func (r *Registry) ShardOf(p Ptr) int { return r.shardOf(p) }
