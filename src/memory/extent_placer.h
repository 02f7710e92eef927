#pragma once
// Placement of contiguous extents in one linear address space of `capacity` slots (the Orca
// baselines' KV space). Two strategies:
//  - BuddyPlacer: power-of-two blocks. A capacity that is not a power of two is split into
//    aligned power-of-two roots, largest first (100 = 64 + 32 + 4 at offsets 0, 64, 96); buddies
//    merge only within a root. An extent for n slots takes a block of next_pow2(n) slots: the
//    lowest-address free block of the smallest order that fits, split down.
//  - FreeListPlacer: exact-size extents in an address-ordered hole list, first-fit or best-fit
//    (smallest hole that fits, lowest address on ties); neighbouring holes coalesce on release.
// Running out is a return value (nullopt), never an exception.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace kvsim::memory {

// An extent [offset, offset + size).
struct Extent {
  std::int64_t offset = 0;
  std::int64_t size = 0;
  bool operator==(const Extent&) const = default;
};

class ExtentPlacer {
 public:
  virtual ~ExtentPlacer() = default;
  // Slots an extent for `slots` (>= 1) requested slots occupies (buddy: the next power of two).
  virtual std::int64_t extent_size(std::int64_t slots) const = 0;
  // Places an extent of extent_size(slots); nullopt, nothing changed, when no hole fits.
  virtual std::optional<std::int64_t> allocate(std::int64_t slots) = 0;
  // Returns the extent at `offset` that allocate(slots) gave.
  virtual void release(std::int64_t offset, std::int64_t slots) = 0;
  // Size of the largest extent allocate() could place now (buddy: the largest free block).
  virtual std::int64_t largest_free_extent() const = 0;
  virtual std::int64_t free_slots() const = 0;
  virtual std::int64_t capacity() const = 0;
  // The largest extent the empty space could place (buddy: the largest root).
  virtual std::int64_t max_extent() const = 0;
  // The free extents (buddy: free blocks) in address order, for tests.
  virtual std::vector<Extent> free_extents() const = 0;
};

class BuddyPlacer final : public ExtentPlacer {
 public:
  explicit BuddyPlacer(std::int64_t capacity);
  std::int64_t extent_size(std::int64_t slots) const override;
  std::optional<std::int64_t> allocate(std::int64_t slots) override;
  void release(std::int64_t offset, std::int64_t slots) override;
  std::int64_t largest_free_extent() const override;
  std::int64_t free_slots() const override { return free_slots_; }
  std::int64_t capacity() const override { return capacity_; }
  std::int64_t max_extent() const override;
  std::vector<Extent> free_extents() const override;

 private:
  static constexpr int kMaxOrder = 62;
  int root_order_at(std::int64_t offset) const;

  std::int64_t capacity_;
  std::int64_t free_slots_;
  std::vector<std::pair<std::int64_t, int>> roots_;  // (offset, order), by offset
  std::vector<std::set<std::int64_t>> free_blocks_;  // per order: offsets, ascending
};

class FreeListPlacer final : public ExtentPlacer {
 public:
  FreeListPlacer(std::int64_t capacity, bool best_fit);
  std::int64_t extent_size(std::int64_t slots) const override { return slots; }
  std::optional<std::int64_t> allocate(std::int64_t slots) override;
  void release(std::int64_t offset, std::int64_t slots) override;
  std::int64_t largest_free_extent() const override;
  std::int64_t free_slots() const override { return free_slots_; }
  std::int64_t capacity() const override { return capacity_; }
  std::int64_t max_extent() const override { return capacity_; }
  std::vector<Extent> free_extents() const override;

 private:
  void add_hole(std::int64_t offset, std::int64_t size);
  void remove_hole(std::map<std::int64_t, std::int64_t>::iterator it);

  std::int64_t capacity_;
  bool best_fit_;
  std::int64_t free_slots_;
  std::map<std::int64_t, std::int64_t> holes_;               // offset → size
  std::set<std::pair<std::int64_t, std::int64_t>> by_size_;  // (size, offset)
};

// The smallest power of two >= n (n >= 1).
std::int64_t next_pow2(std::int64_t n);

}  // namespace kvsim::memory
