#include "common/progress.h"

#include <cstdio>

namespace kvsim {

ProgressLine::ProgressLine(bool enabled, AtEnd at_end)
    : enabled_(enabled), at_end_(at_end), start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() {
  finish();
}

void ProgressLine::draw(const Text& text, std::chrono::steady_clock::time_point now) {
  const std::string line = text(std::chrono::duration<double>(now - start_).count());
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  last_draw_ = now;
  shown_ = true;
}

void ProgressLine::update(const Text& text, bool force) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && !force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  draw(text, now);
}

void ProgressLine::finish(const Text& text) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (text) draw(text, std::chrono::steady_clock::now());
  if (!shown_) return;
  std::fputs(at_end_ == AtEnd::kErase ? "\r\033[K" : "\n", stderr);
  std::fflush(stderr);
}

}  // namespace kvsim
