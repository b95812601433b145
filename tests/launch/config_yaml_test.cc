// The YAML TunePlane writes for LlamaFactory (launch/config_yaml.h): each kind of value in the
// form a YAML 1.1 reader (PyYAML, under LlamaFactory's OmegaConf) and a YAML 1.2 reader
// (yaml-cpp) both read back to the same value; hostile keys and strings round-trip exactly
// through both, PyYAML run for real.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "../catalog/temp_dir.h"
#include "launch/config_yaml.h"
#include "spec/framework_config.h"
#include "spec/yaml_reader.h"
#include "support/subprocess.h"

namespace tuneplane::launch::config_yaml_test {
namespace {

using nlohmann::json;

TEST(ConfigYaml, EachKindOfValueHasOneForm) {
  struct Row {
    json value;
    const char* text;
  };
  const Row rows[] = {
      {nullptr, "null"},
      {true, "true"},
      {false, "false"},
      {0, "0"},
      {-42, "-42"},
      {std::numeric_limits<int64_t>::min(), "-9223372036854775808"},
      {std::numeric_limits<uint64_t>::max(), "18446744073709551615"},
      // Floats always with a '.' and a signed exponent: PyYAML reads "1e-05" as a string.
      {1.0, "1.0"},
      {0.5, "0.5"},
      {1e-4, "1.0e-04"},
      {5e-5, "5.0e-05"},
      {2.5e20, "2.5e+20"},
      {-0.0, "-0.0"},
      {100.0, "100.0"},
      // Bare only when nothing else can read it.
      {"lora", "lora"},
      {"/models/Qwen2.5-7B", "/models/Qwen2.5-7B"},
      {"identity,alpaca_en_demo", "\"identity,alpaca_en_demo\""},
      {"yes", "\"yes\""},
      {"Off", "\"Off\""},
      {"null", "\"null\""},
      {"y", "\"y\""},
      {"42", "\"42\""},
      {"1e-4", "\"1e-4\""},
      {".inf", "\".inf\""},
      {"", "\"\""},
      {"a: b", "\"a: b\""},
      {"say \"hi\"\\", "\"say \\\"hi\\\"\\\\\""},
      {"line\nbreak\ttab", "\"line\\x0Abreak\\x09tab\""},
      {"\xc2\x85|\xe2\x80\xa8|\xef\xbb\xbf|\xef\xbf\xbe", "\"\\u0085|\\u2028|\\uFEFF|\\uFFFE\""},
      {"\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80", "\"\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80\""},
      {json::array(), "[]"},
      {json::object(), "{}"},
      {json::parse(R"([1, "two", {"three": 3.0, "x y": null}])"),
       "[1, two, {three: 3.0, \"x y\": null}]"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(yamlValue(row.value), row.text) << row.value.dump();
  }
}

TEST(ConfigYaml, OneLinePerKeyAfterTheComment) {
  const json config = {{"stage", "sft"}, {"ray_init_kwargs", {{"num_cpus", 4}}}, {"bf16", true}};
  EXPECT_EQ(configYaml(config, "first line\nsecond\x01 line \xc3\xa9"),
            "# first line\n"
            "# second? line ??\n"
            "bf16: true\n"
            "ray_init_kwargs: {num_cpus: 4}\n"
            "stage: sft\n");
}

// Everything a user can put into a config, hostile on purpose.
json hostileConfig() {
  json config = json::object();
  std::string controls;
  for (int c = 1; c < 0x20; ++c) controls += static_cast<char>(c);
  controls += '\x7f';
  std::string c1;
  for (unsigned c = 0x80; c <= 0x9f; ++c) {
    c1 += static_cast<char>(0xc2);
    c1 += static_cast<char>(c);
  }
  const std::string strings[] = {"$(touch /tmp/tp-pwned)",
                                 "`id`",
                                 "a'b\"c\\d",
                                 controls,
                                 c1,
                                 "# comment",
                                 "key: value",
                                 "- item",
                                 "{a: 1}",
                                 "[1, 2]",
                                 "&anchor",
                                 "*alias",
                                 "!tag",
                                 "%YAML 1.1",
                                 "---",
                                 "...",
                                 "${oc.env:HOME}",
                                 "???",
                                 "yes",
                                 "No",
                                 "on",
                                 "OFF",
                                 "y",
                                 "n",
                                 "null",
                                 "Null",
                                 "~",
                                 "true",
                                 "0x10",
                                 "0o17",
                                 "017",
                                 "1_000",
                                 "1e3",
                                 "1.0e+3",
                                 ".5",
                                 ".inf",
                                 "-.inf",
                                 ".nan",
                                 "12:30:00",
                                 "2024-01-01",
                                 "<<",
                                 "=",
                                 " leading space",
                                 "trailing space ",
                                 "\xe2\x80\xa8\xe2\x80\xa9",
                                 "\xef\xbb\xbf BOM",
                                 "\xef\xbf\xbe\xef\xbf\xbf",
                                 "\xf0\x9f\x98\x80 \xe4\xbd\xa0\xe5\xa5\xbd",
                                 std::string(5000, 'x'),
                                 ""};
  // The longest key, written the longest way (\xXX a byte), still fits a YAML key's line.
  config[std::string(spec::kMaxConfigKeyBytes, '\x01')] = "longest key";
  int i = 0;
  for (const std::string& s : strings) {
    config["s" + std::to_string(i++)] = s;
    if (s.size() <= spec::kMaxConfigKeyBytes) config[s] = i;  // as a key too
  }
  for (double d : {0.0, -0.0, 1.0, 0.1, 1e-300, 5e-324, 1.7976931348623157e308, 123456789.125,
                   -2.5e-7, 3.0e20}) {
    config["f" + std::to_string(i++)] = d;
  }
  config["int_min"] = std::numeric_limits<int64_t>::min();
  config["int_max"] = std::numeric_limits<int64_t>::max();
  config["uint_max"] = std::numeric_limits<uint64_t>::max();
  config["nested"] = json::parse(R"({"a": [1, [2, [3, {"b": null}]]], "": {"": ""}, "c d": []})");
  config["nested"]["$(x)"] = {"`y`", "a'b", "line\nbreak"};
  return config;
}

TEST(ConfigYaml, HostileConfigRoundTripsThroughYamlCpp) {
  const json config = hostileConfig();
  const std::string text = configYaml(config, "hostile");
  spec::YamlReader reader("spec", spec::kOperatorDocumentLimits);
  const auto root = reader.parseRoot(text);
  ASSERT_TRUE(root.has_value()) << reader.takeErrors().front().describe() << "\n" << text;
  const auto back = spec::readFrameworkConfig(reader, *root, "config");
  ASSERT_TRUE(back.has_value()) << reader.takeErrors().front().describe();
  EXPECT_EQ(*back, config);
}

// PyYAML is what LlamaFactory's OmegaConf reads YAML with: it must read the same values.
TEST(ConfigYaml, HostileConfigRoundTripsThroughPyYaml) {
  const json config = hostileConfig();
  const tuneplane::testing::TempDir dir;
  const std::string file = dir.write("config.yaml", configYaml(config, "hostile"));
  const auto result =
      test::runProcess({"python3", "-c",
                        "import json, sys, yaml\n"
                        "print(json.dumps(yaml.safe_load(open(sys.argv[1], encoding='utf-8'))))\n",
                        file},
                       {.scratch = dir.path()});
  ASSERT_EQ(result.exit_code, 0) << result.err
                                 << "(python3-yaml is a test dependency: "
                                    "scripts/install-deps.sh)";
  const json back = json::parse(result.out, nullptr, false);
  ASSERT_FALSE(back.is_discarded()) << result.out;
  EXPECT_EQ(back, config);
  for (const auto& [key, value] : config.items()) {
    if (back.value(key, json()) != value) ADD_FAILURE() << key << ": " << back.value(key, json());
  }
}

}  // namespace
}  // namespace tuneplane::launch::config_yaml_test
