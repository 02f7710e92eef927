// The hostile-input battery (issue 17): every input kvsim reads — model, hardware and scenario
// YAML, grids, Hugging Face config.json, traces, measurement CSVs — given empty, binary,
// non-UTF-8, BOM, CRLF, truncated, directory and NaN/Inf/negative/huge values, plus every crash
// and silent-acceptance reproducer found by fuzzing. Each run must end with exit code 2, nothing
// on stdout, one "kvsim: error:" line naming the file, line and field where there is one, and no
// --out file (or temporary) left behind.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace fs = std::filesystem;
using kvsim::test::run_kvsim;

namespace {

struct Case {
  std::string name;
  std::string file;  // written to a fresh temp dir; "" = none; "/" suffix = make a directory
  std::string content;
  std::vector<std::string> args;    // "{}" = the file's path, "{dir}" = the temp dir
  std::vector<std::string> expect;  // substrings of stderr, in order ("{}" = the file's path)
  bool out = true;                  // append --out {dir}/out/report.json
};

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  text.replace(pos, from.size(), to);
  return text;
}

// "line:col: " of the value after `key: ` (YAML) or `"key": ` (JSON) in `text`.
std::string where(const std::string& text, const std::string& key_text) {
  const auto pos = text.find(key_text);
  REQUIRE(pos != std::string::npos);
  const auto value = pos + key_text.size();
  const auto line = std::count(text.begin(), text.begin() + static_cast<long>(value), '\n') + 1;
  const auto line_start = text.rfind('\n', value == 0 ? 0 : value - 1);
  const auto column = value - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
  return std::to_string(line) + ":" + std::to_string(column) + ": ";
}

const char* kModel = R"(name: tiny
source: test
layers: 4
hidden_size: 64
intermediate_size: 128
vocab_size: 100
max_context: 256
attention:
  q_heads: 4
  kv_heads: 2
  head_dim: 16
)";

const char* kGpu = R"(name: g
memory_bytes: 100000000000
memory_bandwidth_gb_s: 1000
peak_tflops: {bf16: 100}
interconnect_bandwidth_gb_s: 100
pcie_bandwidth_gb_s: 32
)";

const char* kHf = R"({
  "model_type": "llama",
  "num_hidden_layers": 2,
  "hidden_size": 64,
  "num_attention_heads": 4,
  "num_key_value_heads": 2,
  "vocab_size": 100,
  "max_position_embeddings": 256,
  "intermediate_size": 128
})";

const char* kScenario = R"(model: llama-3-8b
gpu: h100-sxm
tensor_parallel_size: 1
gpu_memory_utilization: 0.9
block_size: 16
max_model_len: 4096
serving:
  replicas: 1
  max_num_seqs: 64
  max_num_batched_tokens: 8192
  watermark: 0.01
  time_limit_s: 100
slo:
  ttft_ms: 2000
  tpot_ms: 100
  percentile: 99
seed: 0
workload:
  synthetic:
    num_requests: 10
    rate: 2
)";

const char* kTrace = "arrival_s,prompt_tokens,output_tokens\n0,10,5\n0.5,20,6\n";
const char* kMeasurements =
    "op,dtype,m,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,bytes,num_gpus,time_us\n"
    "gemm,bf16,128,4096,4096,,,,,,,,,35.5\n";

std::string nested_aliases() {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  std::string previous = "a";
  for (char c = 'b'; c <= 'k'; ++c) {
    text += std::string(1, c) + ": &" + std::string(1, c) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ", *" : "*") + previous;
    text += "]\n";
    previous = std::string(1, c);
  }
  return text;
}

std::string binary() {
  std::string s;
  for (int i = 0; i < 1024; ++i) s += static_cast<char>((i * 37 + 11) % 256);
  return s;
}

std::vector<Case> cases() {
  const std::vector<std::string> kv_model{"kv", "--model", "{}"};
  const std::vector<std::string> kv_gpu{"kv", "--model", "llama-3-8b", "--gpu", "{}"};
  const std::vector<std::string> simulate{"simulate", "--config", "{}"};
  const std::vector<std::string> plan{"plan", "--config", "{}"};
  const std::vector<std::string> stats{"trace", "stats", "{}"};
  const std::vector<std::string> sim_trace{"simulate", "--model", "llama-3-8b", "--gpu",
                                           "h100-sxm", "--trace", "{}"};
  const std::vector<std::string> calibrate{"calibrate", "--from", "{}", "--gpu", "a100-80gb"};
  std::vector<Case> c;

  // ---- The same damage to every kind of file.
  struct Kind {
    std::string file;
    std::vector<std::string> args;
  };
  for (const Kind& k : std::vector<Kind>{{"m.yaml", kv_model},
                                         {"g.yaml", kv_gpu},
                                         {"s.yaml", simulate},
                                         {"p.yaml", plan},
                                         {"c.json", kv_model},
                                         {"t.csv", stats},
                                         {"x.csv", calibrate}}) {
    c.push_back({k.file + " empty", k.file, "", k.args, {"{}"}});
    c.push_back({k.file + " binary", k.file, binary(), k.args, {"{}"}});
    c.push_back({k.file + " directory", k.file + "/", "", k.args, {"{}"}});
    if (k.file == "x.csv") {
      // Was "expected a CSV header, got an empty file".
      c.back().expect.push_back("is a directory, expected a measurements CSV file");
    }
    c.push_back({k.file + " missing", "", "", k.args, {"nowhere"}});
  }
  for (auto& x : c) {
    if (x.name.ends_with("missing")) {
      for (auto& a : x.args) {
        if (a == "{}") a = "{dir}/nowhere.yaml";
      }
    }
  }

  // ---- Model YAML: every numeric field NaN / Inf / negative / huge, at its line and column.
  for (const std::string field : {"layers", "hidden_size", "intermediate_size", "vocab_size",
                                  "max_context", "q_heads", "kv_heads", "head_dim"}) {
    const bool nested = field == "q_heads" || field == "kv_heads" || field == "head_dim";
    const std::string key = (nested ? "  " : "") + field + ": ";
    const std::string dotted = (nested ? "attention." : "") + field;
    const std::string line_start = "\n" + key;
    const auto pos = std::string(kModel).find(line_start);
    REQUIRE(pos != std::string::npos);
    const auto end = std::string(kModel).find('\n', pos + 1);
    const std::string old_line = std::string(kModel).substr(pos, end - pos);
    for (const std::string value : {".nan", ".inf", "-8", "99999999999999999999"}) {
      const std::string text = replace(kModel, old_line, line_start + value);
      c.push_back({"model " + field + " " + value,
                   "m.yaml",
                   text,
                   kv_model,
                   {"m.yaml:" + where(text, line_start) + dotted + ": expected"}});
    }
  }
  // ---- Hardware YAML numeric fields.
  for (const std::string field : {"memory_bytes", "memory_bandwidth_gb_s",
                                  "interconnect_bandwidth_gb_s", "pcie_bandwidth_gb_s"}) {
    const std::string key = "\n" + field + ": ";
    const auto pos = std::string(kGpu).find(key);
    const auto end = std::string(kGpu).find('\n', pos + 1);
    const std::string old_line = std::string(kGpu).substr(pos, end - pos);
    for (const std::string value : {".nan", "-.inf", "-1", "1e400"}) {
      const std::string text = replace(kGpu, old_line, key + value);
      c.push_back({"gpu " + field + " " + value,
                   "g.yaml",
                   text,
                   kv_gpu,
                   {"g.yaml:" + where(text, key) + field + ": expected"}});
    }
  }
  // ---- Scenario YAML numeric fields.
  for (const auto& [key, dotted] : std::vector<std::pair<std::string, std::string>>{
           {"\ntensor_parallel_size: ", "tensor_parallel_size"},
           {"\ngpu_memory_utilization: ", "gpu_memory_utilization"},
           {"\nblock_size: ", "block_size"},
           {"\n  max_num_seqs: ", "serving.max_num_seqs"},
           {"\n  watermark: ", "serving.watermark"},
           {"\n  time_limit_s: ", "serving.time_limit_s"},
           {"\n  ttft_ms: ", "slo.ttft_ms"},
           {"\n  percentile: ", "slo.percentile"}}) {
    const auto pos = std::string(kScenario).find(key);
    REQUIRE(pos != std::string::npos);
    const auto end = std::string(kScenario).find('\n', pos + 1);
    const std::string old_line = std::string(kScenario).substr(pos, end - pos);
    for (const std::string value : {"nan", "-.inf", "-3", "1e300"}) {
      const std::string text = replace(kScenario, old_line, key + value);
      c.push_back({"scenario " + dotted + " " + value,
                   "s.yaml",
                   text,
                   simulate,
                   {"s.yaml:" + where(text, key) + dotted + ": expected"}});
    }
  }
  // ---- HF config.json numeric fields.
  for (const std::string field :
       {"num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
        "vocab_size", "max_position_embeddings", "intermediate_size"}) {
    const std::string key = "\"" + field + "\": ";
    for (const std::string value : {"\"NaN\"", "-4", "1e400", "1e18"}) {
      const auto pos = std::string(kHf).find(key);
      const auto end = std::string(kHf).find_first_of(",\n", pos);
      const std::string old = std::string(kHf).substr(pos, end - pos);
      const std::string text = replace(kHf, old, key + value);
      const bool out_of_range = value == "1e400";
      c.push_back({"hf " + field + " " + value,
                   "c.json",
                   text,
                   kv_model,
                   {"c.json:" + where(text, key) + (out_of_range ? "" : field + ": "),
                    out_of_range ? "beyond the range of a double" : "expected"}});
    }
  }
  // ---- Trace fields.
  for (const std::string value : {"nan", "inf", "-1", "1e30"}) {
    c.push_back({"trace arrival_s " + value,
                 "t.csv",
                 replace(kTrace, "0.5,20", value + ",20"),
                 stats,
                 {"t.csv:3:1: arrival_s: expected"}});
    c.push_back({"trace prompt_tokens " + value,
                 "t.csv",
                 replace(kTrace, "0.5,20", "0.5," + value),
                 stats,
                 {"t.csv:3:5: prompt_tokens: expected"}});
    c.push_back({"trace output_tokens " + value,
                 "t.csv",
                 replace(kTrace, "20,6", "20," + value),
                 stats,
                 {"t.csv:3:8: output_tokens: expected"}});
    c.push_back({"measurement time_us " + value,
                 "x.csv",
                 replace(kMeasurements, ",35.5", "," + value),
                 calibrate,
                 {"x.csv:2:", "time_us"}});
    // 1e30 us was accepted as a kernel time before.
    if (value == "1e30") c.back().expect.push_back("expected a time of at most 1e9 us");
  }

  // ---- Encodings and line endings: the location must stay right.
  c.push_back({"model BOM",
               "m.yaml",
               "\xEF\xBB\xBF" + replace(kModel, "layers: 4", "layers: -4"),
               kv_model,
               {"m.yaml:3:9: layers: expected a positive integer"}});
  std::string crlf;
  for (char ch : replace(kModel, "vocab_size: 100", "vocab_size: -100")) {
    if (ch == '\n') crlf += '\r';
    crlf += ch;
  }
  c.push_back({"model CRLF", "m.yaml", crlf, kv_model, {"m.yaml:6:13: vocab_size: expected"}});
  c.push_back({"model non-UTF-8 name",
               "m.yaml",
               replace(kModel, "name: tiny", "name: t\xFF\xFEiny"),
               kv_model,
               {"m.yaml:1:7: name: expected a lower-case name"}});
  c.push_back({"model truncated last line",
               "m.yaml",
               std::string(kModel).substr(0, std::string(kModel).size() - 5),
               kv_model,
               {"m.yaml:11:3: attention.head_dim: expected 'key: value', got a key without ':'"}});
  c.push_back({"trace BOM CRLF bad row",
               "t.csv",
               "\xEF\xBB\xBF"
               "arrival_s,prompt_tokens,output_tokens\r\n0,10,5\r\n1,x,5\r\n",
               stats,
               {"t.csv:3:3: prompt_tokens: expected"}});
  c.push_back({"trace truncated last line",
               "t.csv",
               "arrival_s,prompt_tokens,output_tokens\n0,10,5\n1,2",
               stats,
               {"t.csv:3:", "expected 3 columns"}});
  c.push_back({"trace non-UTF-8 cell",
               "t.csv",
               "arrival_s,prompt_tokens,output_tokens\n0,1\xFF,5\n",
               stats,
               {"t.csv:2:3: prompt_tokens: expected"}});

  // ---- Reproducers of crashes, hangs and silent acceptance (issue 17).
  c.push_back({"scenario list as a key",
               "s.yaml",
               "{[a]: 1}\n",
               simulate,
               {"s.yaml:1:2: ", "expected a text key"}});
  c.push_back({"scenario self-referencing alias",
               "s.yaml",
               "serving: &x {a: *x}\n",
               simulate,
               {"s.yaml:", "nested deeper than 64 levels"}});
  c.push_back({"plan self-referencing alias",
               "p.yaml",
               "x: &x [*x]\n",
               plan,
               {"p.yaml:", "nested deeper than 64 levels"}});
  c.push_back({"scenario billion laughs",
               "s.yaml",
               nested_aliases(),
               simulate,
               {"s.yaml:", "more than 100000 values"}});
  c.push_back({"plan billion laughs",
               "p.yaml",
               nested_aliases(),
               plan,
               {"p.yaml:", "more than 100000 values"}});
  std::string big_grid = "model: llama-3-8b\ngpu: h100-sxm\n";
  for (int i = 0; i < 8; ++i) big_grid += "a" + std::to_string(i) + ": [0,1,2,3,4,5,6,7,8,9]\n";
  c.push_back({"plan empty list after large axes",
               "p.yaml",
               big_grid + "z: []\n",
               plan,
               {"p.yaml:11:4: z: an empty list makes an empty grid"}});
  c.push_back({"scenario duplicate key",
               "s.yaml",
               std::string(kScenario) + "block_size: 32\n",
               simulate,
               {"s.yaml:22:1: block_size: duplicate key 'block_size' (first given at "
                "line 5)"}});
  c.push_back({"scenario near-miss key",
               "s.yaml",
               replace(kScenario, "  max_num_seqs:", "  max_num_seq:"),
               simulate,
               {"s.yaml:9:3: serving.max_num_seq: unknown key", "did you mean 'max_num_seqs'"}});
  c.push_back({"hf number beyond double",
               "c.json",
               R"({"schema":"s","x":1e400})",
               kv_model,
               {"c.json:1:19: ", "beyond the range of a double"}});
  c.push_back(
      {"hf 20000-deep",
       "c.json",
       R"({"model_type":"llama","x":)" + std::string(20000, '[') + std::string(20000, ']') + "}",
       kv_model,
       {"c.json:1:", "nested deeper than 64 levels"}});
  c.push_back({"hf layers 3e9",
               "c.json",
               replace(kHf, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3000000000"),
               kv_model,
               {"c.json:3:24: num_hidden_layers: expected an integer in [1, 10000]"}});
  c.push_back({"model layers 3e9",
               "m.yaml",
               replace(kModel, "layers: 4", "layers: 3000000000"),
               kv_model,
               {"m.yaml:3:9: layers: expected an integer in [1, 10000]"}});
  c.push_back({"model head_dim 1e12",
               "m.yaml",
               replace(kModel, "head_dim: 16", "head_dim: 1000000000000"),
               kv_model,
               {"m.yaml:11:13: attention.head_dim: expected at most 1048576"}});
  c.push_back({"trace header only (simulate)",
               "t.csv",
               "arrival_s,prompt_tokens,output_tokens\n",
               sim_trace,
               {"t.csv:1: ", "no requests"}});
  c.push_back({"trace header only (stats)",
               "t.csv",
               "arrival_s,prompt_tokens,output_tokens\n",
               stats,
               {"t.csv:1: ", "no requests"}});
  c.push_back({"out into a missing folder",
               "",
               "",
               {"kv", "--model", "llama-3-8b", "--out", "{dir}/missing/r.json"},
               {"--out: cannot write", "missing/r.json", "does not exist"},
               false});
  c.push_back({"out is a folder",
               "",
               "",
               {"kv", "--model", "llama-3-8b", "--out", "{dir}"},
               {"--out: cannot write", "it is a folder"},
               false});
  c.push_back({"simulate out into a missing folder (checked before the run)",
               "s.yaml",
               kScenario,
               {"simulate", "--config", "{}", "--out", "{dir}/missing/r.json"},
               {"--out: cannot write", "does not exist"},
               false});
  return c;
}

}  // namespace

TEST_CASE("hostile input battery: exit 2, one located message, no output left behind",
          "[cli][errors][hostile]") {
  const std::vector<Case> all = cases();
  REQUIRE(all.size() >= 60);
  for (const Case& c : all) {
    INFO(c.name);
    const std::string dir = kvsim::test::temp_dir();
    std::string path;
    if (!c.file.empty()) {
      if (c.file.ends_with("/")) {
        path = dir + "/" + c.file.substr(0, c.file.size() - 1);
        fs::create_directories(path);
      } else {
        path = kvsim::test::write_temp_file(dir, c.file, c.content);
      }
    }
    std::vector<std::string> args;
    for (std::string a : c.args) {
      if (a == "{}") a = path;
      const auto d = a.find("{dir}");
      if (d != std::string::npos) a.replace(d, 5, dir);
      args.push_back(a);
    }
    const std::string out_dir = dir + "/out";
    if (c.out) {
      fs::create_directories(out_dir);
      args.push_back("--out");
      args.push_back(out_dir + "/report.json");
    }
    args.push_back("--format");
    args.push_back("json");
    std::vector<std::string> expect = c.expect;
    for (std::string& part : expect) {
      if (part == "{}") part = path;
    }
    kvsim::test::check_one_error(run_kvsim(args), expect);
    if (c.out) CHECK(fs::is_empty(out_dir));
  }
}

TEST_CASE("time limit: every request read is completed, rejected or unfinished",
          "[cli][sim][hostile]") {
  // Before: at 100 s the reader had read 372 requests and the summary accounted for 371 (the one
  // read ahead for the next arrival, due after the limit, was in neither count).
  const auto r = run_kvsim(
      {"simulate", "--config",
       kvsim::test::source_dir() + "/configs/scenarios/llama-3-70b-h100-tp4-sharegpt.yaml",
       "--time-limit", "100", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& s = j.at("summary");
  const std::int64_t read = j.at("workload_reader").at("requests").get<std::int64_t>();
  CHECK(read > 100);
  CHECK(s.at("requests_unfinished").get<std::int64_t>() >= 1);
  CHECK(s.at("requests_completed").get<std::int64_t>() +
            s.at("requests_rejected").get<std::int64_t>() +
            s.at("requests_unfinished").get<std::int64_t>() ==
        read);
}
