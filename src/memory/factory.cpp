#include <array>
#include <string>

#include "common/enum_names.h"
#include "common/error.h"
#include "memory/allocator.h"
#include "memory/contiguous_allocator.h"
#include "memory/paged_allocator.h"

namespace kvsim::memory {

namespace {

constexpr EnumNames<AllocatorKind, 4> kKindNames{{{
    {AllocatorKind::kPaged, "paged"},
    {AllocatorKind::kContiguousMax, "contiguous-max"},
    {AllocatorKind::kContiguousPow2, "contiguous-pow2"},
    {AllocatorKind::kContiguousOracle, "contiguous-oracle"},
}}};
constexpr EnumNames<Placement, 3> kPlacementNames{{{
    {Placement::kBuddy, "buddy"},
    {Placement::kFirstFit, "first-fit"},
    {Placement::kBestFit, "best-fit"},
}}};

[[noreturn]] void invalid(const std::string& field, const std::string& message) {
  ErrorLocation where;
  where.field = field;
  throw Error(where, message);
}

// Block ids are 32-bit.
constexpr std::int64_t kMaxBlocks = 2'000'000'000;

}  // namespace

std::string_view allocator_kind_name(AllocatorKind kind) {
  return kKindNames.name(kind);
}

std::string_view placement_name(Placement placement) {
  return kPlacementNames.name(placement);
}

std::optional<AllocatorKind> parse_allocator_kind(std::string_view name) {
  return kKindNames.parse(name);
}

std::optional<Placement> parse_placement(std::string_view name) {
  return kPlacementNames.parse(name);
}

std::vector<std::string> allocator_kind_names() {
  return kKindNames.names();
}

std::vector<std::string> placement_names() {
  return kPlacementNames.names();
}

namespace {

struct SlotSizes {
  Bytes slot = 0;    // bytes of one token slot over every group
  Bytes widest = 0;  // the widest group's bytes per token (a paged block's page size / block)
};

// The CPU offload tier exists only where a block's content id is the prefix cache's: paged, prefix
// caching on, one full-attention group.
void check_offload(const AllocatorOptions& o) {
  if (o.cpu_offload_bytes == 0) return;
  if (o.cpu_offload_bytes > (Bytes{1} << 62)) {
    invalid("cpu_offload_bytes", "expected a sane byte count");
  }
  if (o.kind != AllocatorKind::kPaged) {
    invalid("cpu_offload_bytes", "a CPU offload tier needs the paged allocator, not " +
                                     std::string(allocator_kind_name(o.kind)));
  }
  if (!o.enable_prefix_caching) {
    invalid("cpu_offload_bytes",
            "a CPU offload tier holds prefix-cached blocks: it needs prefix "
            "caching");
  }
  const bool one_full_group =
      o.groups.empty() || (o.groups.size() == 1 && o.groups[0].sliding_window == 0);
  if (!one_full_group) {
    invalid("cpu_offload_bytes",
            "a CPU offload tier is modelled for full-attention models only "
            "(this one has sliding-window or hybrid layer groups)");
  }
}

// Per-sequence state pages: paged only, without prefix caching, within their blocks.
void check_state(const AllocatorOptions& o, Bytes widest) {
  if (o.state_blocks_per_seq == 0 && o.state_bytes_per_seq == 0) return;
  if (o.state_blocks_per_seq < 1 || o.state_blocks_per_seq > (1 << 20)) {
    invalid("state_blocks_per_seq", "expected a positive block count with state bytes, got " +
                                        std::to_string(o.state_blocks_per_seq));
  }
  if (o.kind != AllocatorKind::kPaged) {
    invalid("state_blocks_per_seq", "per-sequence state pages need the paged allocator, not " +
                                        std::string(allocator_kind_name(o.kind)));
  }
  if (o.enable_prefix_caching) {
    invalid("state_blocks_per_seq",
            "prefix caching of a model with a per-sequence state is not modelled");
  }
  const Bytes page = static_cast<Bytes>(std::max<std::int64_t>(o.block_size, 0)) * widest;
  if (o.state_bytes_per_seq == 0 ||
      o.state_bytes_per_seq > static_cast<Bytes>(o.state_blocks_per_seq) * page) {
    invalid("state_bytes_per_seq", "expected a positive byte count that fits " +
                                       std::to_string(o.state_blocks_per_seq) + " pages of " +
                                       std::to_string(page) + " bytes, got " +
                                       std::to_string(o.state_bytes_per_seq));
  }
}

// Checks `o` (throws kvsim::Error naming the field) and returns its slot sizes.
SlotSizes checked_slot_sizes(const AllocatorOptions& o) {
  SlotSizes z{o.bytes_per_slot, o.bytes_per_slot};
  if (o.groups.empty()) {
    if (o.bytes_per_slot == 0) invalid("bytes_per_slot", "expected a positive byte count, got 0");
  } else {
    z = {};
    for (std::size_t i = 0; i < o.groups.size(); ++i) {
      const KvGroupSpec& g = o.groups[i];
      const std::string field = "groups[" + std::to_string(i) + "]";
      if (g.bytes_per_slot == 0) {
        invalid(field + ".bytes_per_slot", "expected a positive byte count, got 0");
      }
      if (g.sliding_window < 0) {
        invalid(field + ".sliding_window",
                "expected 0 (full attention) or a positive window, got " +
                    std::to_string(g.sliding_window));
      }
      z.slot += g.bytes_per_slot;
      z.widest = std::max(z.widest, g.bytes_per_slot);
    }
  }
  if (o.cpu_swap_bytes > (Bytes{1} << 62)) invalid("cpu_swap_bytes", "expected a sane byte count");
  check_offload(o);
  check_state(o, z.widest);

  if (o.kind == AllocatorKind::kPaged) {
    if (o.block_size < 1 || o.block_size > (1 << 20)) {
      invalid("block_size", "expected a positive number of tokens per block, got " +
                                std::to_string(o.block_size));
    }
    if (!(o.watermark >= 0.0 && o.watermark < 1.0)) {
      invalid("watermark", "expected a fraction in [0, 1), got " + std::to_string(o.watermark));
    }
    const Bytes page = static_cast<Bytes>(o.block_size) * z.widest;
    const Bytes blocks = o.capacity_bytes / page;
    if (blocks == 0) {
      invalid("capacity_bytes", "a KV budget of " + std::to_string(o.capacity_bytes) +
                                    " bytes holds no block of " + std::to_string(page) + " bytes");
    }
    if (blocks > static_cast<Bytes>(kMaxBlocks)) {
      invalid("block_size", "the KV budget would hold " + std::to_string(blocks) +
                                " blocks (at most 2e9); use a larger block size");
    }
    return z;
  }

  if (o.max_seq_len < 1) {
    invalid("max_seq_len", "expected a positive token count, got " + std::to_string(o.max_seq_len));
  }
  const Bytes slots = o.capacity_bytes / z.slot;
  if (slots == 0) {
    invalid("capacity_bytes", "a KV budget of " + std::to_string(o.capacity_bytes) +
                                  " bytes holds no slot of " + std::to_string(z.slot) + " bytes");
  }
  if (slots > (Bytes{1} << 61)) invalid("capacity_bytes", "expected a sane byte count");
  return z;
}

}  // namespace

void validate_allocator_options(const AllocatorOptions& o) {
  checked_slot_sizes(o);
}

std::unique_ptr<Allocator> make_allocator(const AllocatorOptions& o) {
  const SlotSizes z = checked_slot_sizes(o);
  if (o.kind == AllocatorKind::kPaged) return std::make_unique<PagedAllocator>(o);
  const ReservationPolicy policy = o.kind == AllocatorKind::kContiguousMax ? ReservationPolicy::kMax
                                   : o.kind == AllocatorKind::kContiguousPow2
                                       ? ReservationPolicy::kPow2
                                       : ReservationPolicy::kOracle;
  return std::make_unique<ContiguousAllocator>(
      policy, o.placement, static_cast<std::int64_t>(o.capacity_bytes / z.slot), z.slot,
      o.max_seq_len, static_cast<std::int64_t>(o.cpu_swap_bytes / z.slot));
}

}  // namespace kvsim::memory
