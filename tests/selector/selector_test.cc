// Capability selectors (core/selector, docs/selectors.md): the grammar, one
// test per kind of parse error with its exact position and message, type
// errors, explanations, a bounded random-input property, and evaluation on
// the sim profiles, directly and through ACCEL_VISIBLE_DEVICES.
#include <stdlib.h>

#include <random>
#include <string>
#include <vector>

#include "capabilities.h"
#include "selector.h"
#include "test_util.h"

namespace {

using accel::selector::MapAttributes;
using accel::selector::NameSet;
using accel::selector::Parse;
using accel_test::ScopedInstance;

constexpr uint64_t kGiB = uint64_t{1} << 30;

// An L4-like device: 22.5 GiB, ptx and cubin, fp8, NUMA node 0, not simulated.
MapAttributes L4() {
  MapAttributes a;
  a.Set("kind", std::string("gpu"));
  a.Set("name", std::string("NVIDIA L4"));
  a.Set("vendor", std::string("NVIDIA"));
  a.Set("sku", std::string("nvidia-l4"));
  a.Set("vendor_id", uint64_t{0x10de});
  a.Set("memory_total", uint64_t{24152899584});
  a.Set("compute_units", uint64_t{58});
  a.Set("numa_node", int64_t{0});
  a.Set("simulated", false);
  a.Set("kernel_formats", NameSet{{"ptx", "cubin"}});
  a.Set("numeric_formats", NameSet{{"fp32", "fp16", "fp8-e4m3"}});
  a.Set("features", NameSet{{"peer-access"}});
  a.Set("flags", NameSet{{}});
  return a;
}

// A CPU with 64 GiB, native-host and spirv-vulkan, NUMA unknown.
MapAttributes Cpu() {
  MapAttributes a;
  a.Set("kind", std::string("cpu"));
  a.Set("vendor", std::string("AMD"));
  a.Set("sku", std::string("amd-epyc"));
  a.Set("memory_total", 64 * kGiB);
  a.Set("compute_units", uint64_t{32});
  a.Set("numa_node", int64_t{-1});
  a.Set("simulated", false);
  a.Set("kernel_formats", NameSet{{"native-host", "spirv-vulkan"}});
  a.Set("numeric_formats", NameSet{{"fp64", "fp32"}});
  a.Set("features", NameSet{{}});
  return a;
}

// Whether `text` parses and matches `a`; fails the test when it does not parse.
bool Match(const std::string& text, const MapAttributes& a) {
  auto s = Parse(text);
  EXPECT_TRUE(s.ok()) << text << ": " << (s.ok() ? "" : s.error().ToString());
  return s.ok() && s->Matches(a);
}

std::string Error(const std::string& text) {
  auto s = Parse(text);
  EXPECT_FALSE(s.ok()) << text << " parsed";
  return s.ok() ? "" : s.error().ToString();
}

TEST(Selector, ComparisonOperators) {
  const MapAttributes l4 = L4();
  EXPECT_TRUE(Match("compute_units == 58", l4));
  EXPECT_TRUE(Match("compute_units = 58", l4));
  EXPECT_TRUE(Match("compute_units != 57", l4));
  EXPECT_TRUE(Match("compute_units < 59", l4));
  EXPECT_TRUE(Match("compute_units <= 58", l4));
  EXPECT_TRUE(Match("compute_units > 57", l4));
  EXPECT_TRUE(Match("compute_units >= 58", l4));
  EXPECT_FALSE(Match("compute_units > 58", l4));
  EXPECT_TRUE(Match("vendor_id == 0x10de", l4));
  EXPECT_TRUE(Match("numa_node >= 0", l4));
  EXPECT_TRUE(Match("numa_node == -1", Cpu()));
  EXPECT_TRUE(Match("numa_node < 0", Cpu()));
}

TEST(Selector, StringsAndKindsCompareIgnoringCase) {
  const MapAttributes l4 = L4();
  EXPECT_TRUE(Match("kind==gpu", l4));
  EXPECT_TRUE(Match("kind==GPU", l4));
  EXPECT_FALSE(Match("kind==cpu", l4));
  EXPECT_TRUE(Match("vendor==nvidia", l4));
  EXPECT_TRUE(Match("name == \"NVIDIA L4\"", l4));
  EXPECT_TRUE(Match("name == 'nvidia l4'", l4));
  EXPECT_TRUE(Match("vendor != amd", l4));
}

TEST(Selector, LogicalOperatorsAndPrecedence) {
  const MapAttributes l4 = L4();
  const MapAttributes cpu = Cpu();
  // && binds tighter than ||: true || (false && false).
  EXPECT_TRUE(Match("kind==gpu || kind==npu && mem>=1TiB", l4));
  EXPECT_FALSE(Match("(kind==gpu || kind==npu) && mem>=1TiB", l4));
  // ! binds tighter than &&.
  EXPECT_TRUE(Match("!simulated && kind==gpu", l4));
  EXPECT_FALSE(Match("!(kind==gpu && fp8)", l4));
  EXPECT_TRUE(Match("!!fp8", l4));
  EXPECT_TRUE(Match("kind==cpu&&!fp8||fp8&&kind==gpu", cpu));
  EXPECT_TRUE(Match("kind==cpu&&!fp8||fp8&&kind==gpu", l4));
  EXPECT_TRUE(Match("((kind==gpu))", l4));
}

TEST(Selector, SizeUnits) {
  const MapAttributes cpu = Cpu();  // 64 GiB = 68719476736 B
  EXPECT_TRUE(Match("mem == 64GiB", cpu));
  EXPECT_TRUE(Match("mem == 65536MiB", cpu));
  EXPECT_TRUE(Match("mem == 67108864KiB", cpu));
  EXPECT_TRUE(Match("mem == 0.0625TiB", cpu));
  EXPECT_TRUE(Match("mem == 68719476736B", cpu));
  EXPECT_TRUE(Match("mem > 68GB && mem < 69GB", cpu));
  EXPECT_TRUE(Match("mem > 68719MB && mem < 68720MB", cpu));
  EXPECT_TRUE(Match("mem > 68719476kB && mem > 68719476KB", cpu));
  EXPECT_TRUE(Match("mem >= 0.06TB", cpu));
  EXPECT_TRUE(Match("memory_total >= 1.5GiB", cpu));
  EXPECT_TRUE(Match("memory >= 64GiB", cpu));
  EXPECT_FALSE(Match("mem > 64GiB", cpu));
}

TEST(Selector, SetMembership) {
  const MapAttributes l4 = L4();
  EXPECT_TRUE(Match("sku in (h100, nvidia-l4)", l4));
  EXPECT_FALSE(Match("sku in (h100, mi300x)", l4));
  EXPECT_TRUE(Match("kind in (npu, gpu)", l4));
  EXPECT_TRUE(Match("numa_node in (-1, 0)", l4));
  EXPECT_TRUE(Match("compute_units IN (58)", l4));
  EXPECT_TRUE(Match("mem in (64GiB)", Cpu()));
}

TEST(Selector, FormatsFeaturesAndBooleans) {
  const MapAttributes l4 = L4();
  const MapAttributes cpu = Cpu();
  EXPECT_TRUE(Match("format:ptx", l4));
  EXPECT_FALSE(Match("format:spirv-vulkan", l4));
  EXPECT_TRUE(Match("format:spirv-vulkan", cpu));
  EXPECT_TRUE(Match("format : \"native-host\"", cpu));
  EXPECT_TRUE(Match("fp8", l4));  // either fp8 format
  EXPECT_FALSE(Match("fp8", cpu));
  EXPECT_TRUE(Match("fp8-e4m3 && !fp8-e5m2", l4));
  EXPECT_TRUE(Match("numeric:fp16 && numeric:fp8", l4));
  EXPECT_TRUE(Match("peer-access && feature:peer-access && peer_access", l4));
  EXPECT_FALSE(Match("peer-access", cpu));
  EXPECT_TRUE(Match("!simulated && simulated == false && simulated != true", l4));
  EXPECT_FALSE(Match("flag:uuid-unique", l4));
  EXPECT_FALSE(Match("modeled_format:ptx", l4));  // not reported
  EXPECT_TRUE(Match("kind==gpu && mem>=20GiB && fp8 && format:ptx", l4));
}

TEST(Selector, AnAttributeTheDeviceDoesNotReportIsFalse) {
  EXPECT_FALSE(Match("mem_free >= 1GiB", L4()));
  EXPECT_TRUE(Match("!(mem_free >= 1GiB)", L4()));
  EXPECT_EQ(Parse("mem_free >= 1GiB")->Explain(L4()), "mem_free >= 1GiB: the device does not report memory_free");
}

// ------------------------------------------------------------ parse errors

TEST(SelectorError, MissingValueNamesPositionAndToken) {
  const auto r = Parse("kind==gpu && (mem>=)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().position, 19u);
  EXPECT_EQ(r.error().column(), 20u);
  EXPECT_EQ(r.error().expected, "a value after '>='");
  EXPECT_EQ(r.error().found, "')'");
  EXPECT_EQ(r.error().ToString(), "column 20: expected a value after '>=', found ')'");
}

TEST(SelectorError, MissingTermAfterOperator) {
  EXPECT_EQ(Error("kind==gpu &&"),
            "column 13: expected a term (a key, a name or '(') after '&&', found end of selector");
  EXPECT_EQ(Error("fp8 || )"), "column 8: expected a term (a key, a name or '(') after '||', found ')'");
  EXPECT_EQ(Error("!"), "column 2: expected a term (a key, a name or '(') after '!', found end of selector");
  EXPECT_EQ(Error(""), "column 1: expected a term (a key, a name or '(') at the start, found end of selector");
  EXPECT_EQ(Error("   "), "column 4: expected a term (a key, a name or '(') at the start, found end of selector");
}

TEST(SelectorError, UnclosedParenthesis) {
  EXPECT_EQ(Error("(fp8 && (kind==gpu)"),
            "column 20: expected ')' to close the '(' at column 1, found end of selector");
}

TEST(SelectorError, TrailingTokens) {
  EXPECT_EQ(Error("fp8)"), "column 4: expected '&&', '||' or the end of the selector, found ')'");
  EXPECT_EQ(Error("fp8 fp16"), "column 5: expected '&&', '||' or the end of the selector, found 'fp16'");
}

// Nesting is bounded, so no input exhausts the stack (120,000 characters of
// '!' and '(' overflowed it before the bound).
TEST(SelectorError, NestingDeeperThanTheBoundIsRefused) {
  const std::string ok = std::string(64, '!') + std::string(64, '(') + "fp8" + std::string(64, ')');
  EXPECT_TRUE(Parse(ok).ok()) << Error(ok);
  EXPECT_EQ(Error(std::string(129, '(') + "fp8" + std::string(129, ')')),
            "column 129: the selector nests '!' and '(' deeper than 128 levels");
  EXPECT_EQ(Error(std::string(200, '!') + "fp8"), "column 129: the selector nests '!' and '(' deeper than 128 levels");
  const std::string huge = std::string(60000, '!') + std::string(30000, '(') + "fp8" + std::string(30000, ')');
  EXPECT_EQ(Error(huge), "column 129: the selector nests '!' and '(' deeper than 128 levels");
}

TEST(SelectorError, SingleAmpersandOrBar) {
  EXPECT_EQ(Error("fp8 & fp16"), "column 5: expected '&&', found '&'");
  EXPECT_EQ(Error("fp8 | fp16"), "column 5: expected '||', found '|'");
}

TEST(SelectorError, UnexpectedCharacter) {
  EXPECT_EQ(Error("mem >= 4GiB # x"), "column 13: unexpected character '#'");
  EXPECT_EQ(Error("fp8 && \x01"), "column 8: unexpected character '\\x01'");
}

TEST(SelectorError, UnterminatedString) {
  EXPECT_EQ(Error("name == \"NVIDIA"), "column 9: unterminated string: expected a closing \" for the one at column 9");
}

TEST(SelectorError, MissingComparisonAfterKey) {
  EXPECT_EQ(Error("mem && fp8"),
            "column 5: expected a comparison (==, !=, <, <=, >, >= or in) after 'mem', found '&&'");
}

TEST(SelectorError, BadInList) {
  EXPECT_EQ(Error("sku in h100"), "column 8: expected '(' after 'in', found 'h100'");
  EXPECT_EQ(Error("sku in (h100 mi300x)"), "column 14: expected ',' or ')' in the list, found 'mi300x'");
  EXPECT_EQ(Error("sku in (h100,)"), "column 14: expected a value after ',', found ')'");
}

TEST(SelectorError, UnknownKeySuggestsTheNearest) {
  const auto r = Parse("kind==gpu && memm >= 40GiB");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().position, 13u);
  EXPECT_EQ(r.error().ToString(), "column 14: unknown key 'memm' (did you mean 'mem'?)");
  EXPECT_EQ(Error("compute_unit > 4"), "column 1: unknown key 'compute_unit' (did you mean 'compute_units'?)");
  // Nothing close: the message lists the keys.
  const std::string far = Error("zzzzzz == 1");
  EXPECT_EQ(far.rfind("column 1: unknown key 'zzzzzz' (keys: kind, name, vendor,", 0), 0u) << far;
}

TEST(SelectorError, UnknownBareNameSuggestsTheNearest) {
  EXPECT_EQ(Error("fp8 && peer-acess"), "column 8: unknown key or name 'peer-acess' (did you mean 'peer-access'?)");
  EXPECT_EQ(Error("ptx"), "column 1: 'ptx' is a kernel format: write format:ptx");
}

TEST(SelectorError, UnknownPrefixAndName) {
  EXPECT_EQ(Error("fromat:ptx"),
            "column 1: unknown prefix 'fromat' (did you mean 'format'?) (prefixes: format, modeled_format, feature, "
            "numeric, flag)");
  EXPECT_EQ(Error("format:spirv-vulcan"),
            "column 8: unknown format name 'spirv-vulcan' (did you mean 'spirv-vulkan'? known: native-host, "
            "spirv-vulkan, opencl-c, spir, spirv-opencl, ptx, cubin, hsaco)");
  EXPECT_EQ(Error("format:"), "column 8: expected a name after 'format:', found end of selector");
}

TEST(SelectorError, TypeErrors) {
  EXPECT_EQ(Error("kind >= 3"), "column 6: '>=' does not apply to 'kind' (a device kind): use ==, != or in");
  EXPECT_EQ(Error("kind == 3"),
            "column 9: 'kind' takes a device kind (cpu, gpu, npu, tpu, fpga or unknown), found '3'");
  EXPECT_EQ(Error("mem == gpu"),
            "column 8: 'memory_total' takes a size such as 40GiB (B, kB, KB, MB, GB, TB, KiB, "
            "MiB, GiB, TiB), found 'gpu'");
  EXPECT_EQ(Error("vendor < amd"), "column 8: '<' does not apply to 'vendor' (a string): use ==, != or in");
  EXPECT_EQ(Error("compute_units > 1.5"), "column 17: 'compute_units' takes an unsigned integer, found '1.5'");
  EXPECT_EQ(Error("compute_units > -1"), "column 17: 'compute_units' takes an unsigned integer, found '-1'");
  EXPECT_EQ(Error("compute_units > 4GiB"), "column 17: 'compute_units' takes an unsigned integer, found '4GiB'");
  EXPECT_EQ(Error("simulated == 1"), "column 14: 'simulated' takes true or false, found '1'");
  EXPECT_EQ(Error("features == ptx"), "column 1: 'features' is a set of names: test one with feature:<name>");
  EXPECT_EQ(Error("kernel_formats"), "column 1: 'kernel_formats' is a set of names: test one with format:<name>");
  EXPECT_EQ(Error("max_grid_dims > 4"),
            "column 1: 'max_grid_dims' is a 3-component value: selectors cannot compare it");
  EXPECT_EQ(Error("compute_units > 99999999999999999999"),
            "column 17: '99999999999999999999' is out of range for 'compute_units'");
}

TEST(SelectorError, SizesNeedAKnownUnit) {
  EXPECT_EQ(Error("mem >= 40"),
            "column 10: 'memory_total' is a size: '40' needs a unit (B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB)");
  EXPECT_EQ(Error("mem >= 40gib"),
            "column 10: unknown unit 'gib' in '40gib' (did you mean 'GiB'? units: B, kB, KB, MB, "
            "GB, TB, KiB, MiB, GiB, TiB, MB/s, GB/s)");
  EXPECT_EQ(Error("mem >= 40GB/s"), "column 8: 'memory_total' is a size in bytes, found a bandwidth '40GB/s'");
  EXPECT_EQ(Error("mem >= 99999999TiB"), "column 8: '99999999TiB' is out of range for 'memory_total'");
}

// ------------------------------------------------------------ explanations

TEST(SelectorExplain, NamesTheFailingAtomAndTheDeviceValue) {
  const MapAttributes l4 = L4();
  auto s = Parse("kind==gpu && mem>=40GiB && fp8");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Explain(l4), "mem>=40GiB: the device has 22.5 GiB");
  EXPECT_EQ(s->Explain(Cpu()),
            "kind==gpu: the device's kind is cpu; fp8: the device has no fp8-e4m3 or fp8-e5m2; its numeric_formats: "
            "fp64, fp32");
  EXPECT_EQ(Parse("format:spirv-vulkan")->Explain(l4),
            "format:spirv-vulkan: the device has no spirv-vulkan; its kernel_formats: ptx, cubin");
  EXPECT_EQ(Parse("vendor in (amd, intel)")->Explain(l4), "vendor in (amd, intel): the device's vendor is \"NVIDIA\"");
  EXPECT_EQ(Parse("compute_units >= 100 || numa_node == 1")->Explain(l4),
            "compute_units >= 100: the device's compute_units is 58; numa_node == 1: the device's numa_node is 0");
  EXPECT_EQ(Parse("simulated")->Explain(l4), "simulated: the device is not simulated");
  EXPECT_EQ(Parse("kind==gpu")->Explain(l4), "");
}

TEST(SelectorExplain, NegationsSayWhatHolds) {
  const MapAttributes l4 = L4();
  EXPECT_EQ(Parse("!peer-access")->Explain(l4), "!peer-access: the device has peer-access");
  EXPECT_EQ(Parse("!(kind==gpu && fp8)")->Explain(l4),
            "!(kind==gpu): the device's kind is gpu; !fp8: the device has fp8-e4m3");
  EXPECT_EQ(Parse("!(mem >= 1GiB)")->Explain(l4), "!(mem >= 1GiB): the device has 22.5 GiB");
}

// ------------------------------------------------------------ random input

// Every input gives a selector or an error whose position lies inside the text (or at its end).
void CheckTotal(const std::string& text) {
  auto r = Parse(text);
  if (r.ok()) {
    (void)r->Matches(L4());
    (void)r->Explain(Cpu());
    return;
  }
  EXPECT_LE(r.error().position, text.size()) << text;
  EXPECT_FALSE(r.error().message.empty()) << text;
  EXPECT_EQ(r.error().ToString().rfind("column " + std::to_string(r.error().position + 1) + ": ", 0), 0u);
}

TEST(SelectorProperty, RandomBytesNeverCrash) {
  std::mt19937 rng(16);
  for (int i = 0; i < 3000; ++i) {
    std::string text(rng() % 40, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    CheckTotal(text);
  }
}

TEST(SelectorProperty, RandomTokenSequencesNeverCrash) {
  static const std::vector<std::string> kTokens = {"kind",      "mem",     "sku",
                                                   "fp8",       "format",  ":",
                                                   "ptx",       "==",      "!=",
                                                   "<",         "<=",      ">",
                                                   ">=",        "in",      "(",
                                                   ")",         ",",       "&&",
                                                   "||",        "!",       "gpu",
                                                   "40GiB",     "1.5",     "-1",
                                                   "\"x y\"",   "'",       "80GB/s",
                                                   "simulated", "true",    "numa_node",
                                                   "0x1f",      "feature", "peer-access",
                                                   "memm",      "=",       "&",
                                                   " ",         "GiB",     "99999999999999999999TiB"};
  std::mt19937 rng(17);
  int parsed = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string text;
    const size_t n = rng() % 12;
    for (size_t k = 0; k < n; ++k) text += kTokens[rng() % kTokens.size()] + (rng() % 2 ? " " : "");
    CheckTotal(text);
    parsed += Parse(text).ok() ? 1 : 0;
  }
  EXPECT_GT(parsed, 0);  // the sequences reach the evaluator too
}

// ------------------------------------------------------------ sim profiles

// The devices of a sim instance with `profile` whose capabilities match `text`, by index.
std::vector<size_t> MatchingSimDevices(const std::string& profile, const std::string& text) {
  setenv("ACCEL_SIM_PROFILE", profile.c_str(), 1);
  accel_instance_desc_t d = ScopedInstance::Backends("sim");
  ScopedInstance instance(&d);
  auto s = Parse(text);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().ToString());
  std::vector<size_t> out;
  const auto devices = instance.Devices();
  for (size_t i = 0; i < devices.size(); ++i) {
    accel_device_capabilities_t caps{};
    caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
    caps.struct_size = sizeof(caps);
    EXPECT_EQ(accel_device_get_capabilities(devices[i], &caps), ACCEL_SUCCESS) << accel_last_error();
    if (s.ok() && s->Matches(accel::selector::CapabilityAttributes(caps))) out.push_back(i);
  }
  return out;
}

TEST(SelectorSim, H100NodeAnswers) {
  const std::vector<size_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(MatchingSimDevices("h100-sxm-8", "kind==gpu && mem>=79GiB"), all);
  EXPECT_EQ(MatchingSimDevices("h100-sxm-8", "kind==gpu && mem>=80GB && fp8 && simulated && peer-access"), all);
  // 85520809984 B is 79.6 GiB: under 80 GiB.
  EXPECT_TRUE(MatchingSimDevices("h100-sxm-8", "mem>=80GiB").empty());
  EXPECT_EQ(MatchingSimDevices("h100-sxm-8", "numa_node == 1"), (std::vector<size_t>{4, 5, 6, 7}));
  // A simulated device executes native-host; the part's formats are modeled.
  EXPECT_EQ(MatchingSimDevices("h100-sxm-8", "format:native-host && modeled_format:ptx && !format:ptx"), all);
  EXPECT_EQ(MatchingSimDevices("h100-sxm-8", "sku in (nvidia-h100-sxm5-80gb, amd-instinct-mi300x)"), all);
}

TEST(SelectorSim, MixedVendorAnswers) {
  EXPECT_EQ(MatchingSimDevices("mixed-vendor", "vendor==amd"), (std::vector<size_t>{2, 3}));
  EXPECT_EQ(MatchingSimDevices("mixed-vendor", "fp8 && mem < 40GiB"), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(MatchingSimDevices("mixed-vendor", "arch == gfx90a || compute_units == 58").size(), 4u);
}

// The visible devices' names and the setting warnings of a sim instance with ACCEL_VISIBLE_DEVICES=`mask`.
struct Visible {
  std::vector<std::string> vendors;
  std::vector<std::string> warnings;
};

Visible WithMask(const std::string& profile, const std::string& mask) {
  setenv("ACCEL_SIM_PROFILE", profile.c_str(), 1);
  setenv("ACCEL_VISIBLE_DEVICES", mask.c_str(), 1);
  accel_instance_desc_t d = ScopedInstance::Backends("sim");
  Visible v;
  {
    ScopedInstance instance(&d);
    for (accel_device_t dev : instance.Devices()) {
      accel_device_capabilities_t caps{};
      caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
      caps.struct_size = sizeof(caps);
      EXPECT_EQ(accel_device_get_capabilities(dev, &caps), ACCEL_SUCCESS);
      v.vendors.emplace_back(caps.vendor);
    }
    for (const accel_loader_warning_t& w : instance.Warnings()) {
      v.warnings.push_back(std::string(w.setting) + "=" + w.value + ": " + w.message);
    }
  }
  unsetenv("ACCEL_VISIBLE_DEVICES");
  return v;
}

TEST(SelectorVisibleDevices, SelectorShowsExactlyTheMatchingDevices) {
  Visible v = WithMask("mixed-vendor", "vendor==amd");
  EXPECT_EQ(v.vendors, (std::vector<std::string>{"AMD", "AMD"}));
  EXPECT_TRUE(v.warnings.empty());
  v = WithMask("mixed-vendor", "sel:fp8");
  EXPECT_EQ(v.vendors, (std::vector<std::string>{"NVIDIA", "NVIDIA"}));
  v = WithMask("h100-sxm-8", "kind==gpu && mem>=79GiB && numa_node==0");
  EXPECT_EQ(v.vendors.size(), 4u);
  // A plain list still means indices.
  v = WithMask("mixed-vendor", "3,0");
  EXPECT_EQ(v.vendors, (std::vector<std::string>{"NVIDIA", "AMD"}));
}

TEST(SelectorVisibleDevices, BadSelectorHidesEverythingAndWarnsWithThePosition) {
  Visible v = WithMask("mixed-vendor", "vendor==amd && mem>=");
  EXPECT_TRUE(v.vendors.empty());
  EXPECT_EQ(v.warnings, (std::vector<std::string>{
                            "ACCEL_VISIBLE_DEVICES=vendor==amd && mem>=: the selector does not parse, so no device is "
                            "visible: column 21: expected a value after '>=', found end of selector"}));
  // The column counts from the start of the value, "sel:" included.
  v = WithMask("mixed-vendor", "sel:vendr==amd");
  EXPECT_TRUE(v.vendors.empty());
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("column 5: unknown key 'vendr' (did you mean 'vendor'?)"), std::string::npos)
      << v.warnings[0];
  // Columns inside the message too: the '(' is the fifth character of the value (it said column 1).
  v = WithMask("mixed-vendor", "sel:(fp8");
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("column 9: expected ')' to close the '(' at column 5"), std::string::npos)
      << v.warnings[0];
}

TEST(SelectorParse, FractionalSizesReadAPointAndStayInRange) {
  // 1.5 GiB exactly (from_chars reads the point whatever the locale); 9000000.5 TiB is past 2^63 and below 2^64
  // bytes only in part: llround's long long overflowed there and gave a wrong size instead of this error.
  MapAttributes a = Cpu();
  a.Set("memory_total", 3 * kGiB / 2);
  EXPECT_TRUE(Match("mem>=1.5GiB", a));
  EXPECT_FALSE(Match("mem>1.5GiB", a));
  a.Set("memory_total", uint64_t{9500000000000000000u});  // past 2^63, below 9000000.5 TiB (9.9e18 bytes)
  EXPECT_TRUE(Match("mem<9000000.5TiB", a));
  auto past = Parse("mem<17000000.5TiB");
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().ToString().find("'17000000.5TiB' is out of range for 'memory_total'"), std::string::npos)
      << past.error().ToString();
}

TEST(SelectorVisibleDevices, SelectorMatchingNothingWarns) {
  Visible v = WithMask("mixed-vendor", "kind==tpu");
  EXPECT_TRUE(v.vendors.empty());
  EXPECT_EQ(v.warnings, (std::vector<std::string>{
                            "ACCEL_VISIBLE_DEVICES=kind==tpu: the selector matches none of the 4 physical device(s)"}));
}

// ------------------------------------------------------------ the C API (accel.h, ABI 1.1)

TEST(SelectorCApi, CheckNamesTheColumn) {
  uint32_t column = 77;
  EXPECT_EQ(accel_selector_check("kind==gpu && mem>=40GiB", &column), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(column, 0u);
  EXPECT_EQ(accel_selector_check("kind==gpu && (mem>=)", &column), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(column, 20u);
  EXPECT_STREQ(accel_last_error(),
               "accel_selector_check: 'selector' column 20: expected a value after '>=', found ')'");
  EXPECT_EQ(accel_selector_check(nullptr, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(accel_last_error(), "accel_selector_check: 'selector' is NULL");
}

TEST(SelectorCApi, PhysicalDevicesMatchAndExplain) {
  setenv("ACCEL_SIM_PROFILE", "mixed-vendor", 1);
  accel_instance_desc_t d = ScopedInstance::Backends("sim");
  ScopedInstance instance(&d);
  uint32_t n = 0;
  ASSERT_EQ(accel_instance_enumerate_physical_devices(instance.get(), &n, nullptr), ACCEL_SUCCESS);
  std::vector<accel_physical_device_t> physical(n);
  ASSERT_EQ(accel_instance_enumerate_physical_devices(instance.get(), &n, physical.data()), ACCEL_SUCCESS);
  ASSERT_EQ(n, 4u);
  std::vector<uint32_t> amd;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t matches = 7;
    ASSERT_EQ(accel_physical_device_matches(physical[i], "vendor==amd", &matches), ACCEL_SUCCESS) << accel_last_error();
    if (matches == 1) amd.push_back(i);
    EXPECT_TRUE(matches == 0 || matches == 1);
  }
  EXPECT_EQ(amd, (std::vector<uint32_t>{2, 3}));
  // Explain: the size first, then the text; "" for a match.
  size_t size = 0;
  ASSERT_EQ(accel_physical_device_explain(physical[0], "vendor==amd", 0, nullptr, &size), ACCEL_SUCCESS);
  std::string text(size, '\0');
  ASSERT_EQ(accel_physical_device_explain(physical[0], "vendor==amd", size, text.data(), nullptr), ACCEL_SUCCESS);
  text.resize(size - 1);
  EXPECT_EQ(text, "vendor==amd: the device's vendor is \"NVIDIA\"");
  ASSERT_EQ(accel_physical_device_explain(physical[2], "vendor==amd", 0, nullptr, &size), ACCEL_SUCCESS);
  EXPECT_EQ(size, 1u) << "a match explains nothing";
  char small[4];
  EXPECT_EQ(accel_physical_device_explain(physical[0], "vendor==amd", sizeof(small), small, &size),
            ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_GT(size, sizeof(small)) << "the size needed is written back";
  // Bad selectors and handles.
  uint32_t matches = 0;
  EXPECT_EQ(accel_physical_device_matches(physical[0], "mem >=", &matches), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'selector' column 7: expected a value after '>='"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(
      accel_physical_device_matches(reinterpret_cast<accel_physical_device_t>(uintptr_t{0x1234}), "fp8", &matches),
      ACCEL_ERROR_INVALID_HANDLE);
}

}  // namespace
