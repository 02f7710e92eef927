// config/settings_table.cpp: the table itself: one row per setting with a path, flag, help line and
// metavar.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "config/settings.h"

using kvsim::config::find_setting_by_flag;
using kvsim::config::find_setting_by_path;
using kvsim::config::Setting;
using kvsim::config::settings;
using kvsim::config::SettingType;

TEST_CASE("Every setting has one path, one flag, a help line and a metavar for its type",
          "[config][settings]") {
  std::set<std::string_view> paths, flags;
  for (const Setting& s : settings()) {
    INFO(s.path);
    CHECK(paths.insert(s.path).second);
    CHECK(flags.insert(s.flag).second);
    CHECK(s.flag.rfind("--", 0) == 0);
    CHECK_FALSE(s.help.empty());
    CHECK(s.apply != nullptr);
    CHECK((s.type == SettingType::kChoice) == (s.choices != nullptr));
    CHECK(kvsim::config::metavar(s.type).empty() == (s.type == SettingType::kBool));
    CHECK(find_setting_by_path(s.path) == &s);
    CHECK(find_setting_by_flag(s.flag) == &s);
  }
  CHECK(find_setting_by_flag("--tp") == find_setting_by_flag("--tensor-parallel-size"));
  CHECK(find_setting_by_path("serving.max_num_seqs")->key() == "max_num_seqs");
  CHECK(find_setting_by_path("serving.max_num_seqs")->section() == "serving");
  CHECK(find_setting_by_path("block_size")->section().empty());
  CHECK(kvsim::config::metavar(find_setting_by_flag("--swap-space")->type) == "GIB");
  CHECK(kvsim::config::metavar(find_setting_by_flag("--slo-ttft")->type) == "MS");
}
