// The texts of the tree marks' states (loop_marks.hpp): what the store and the API carry.
#include <loopr/core/loop_marks.hpp>

namespace loopr {

namespace {

template <typename E>
struct Named {
  E value;
  const char* text;
};

constexpr Named<GateResult> kGate[] = {{GateResult::none, ""},
                                       {GateResult::checking, "checking"},
                                       {GateResult::passed, "passed"},
                                       {GateResult::failed, "failed"},
                                       {GateResult::forced, "forced"}};
constexpr Named<PrChecks> kChecks[] = {{PrChecks::none, ""},
                                       {PrChecks::pending, "pending"},
                                       {PrChecks::passed, "passed"},
                                       {PrChecks::failed, "failed"},
                                       {PrChecks::skipped, "skipped"}};

template <typename E, std::size_t N>
const char* text_of(const Named<E> (&table)[N], E value) {
  for (const auto& n : table)
    if (n.value == value) return n.text;
  return "";
}

template <typename E, std::size_t N>
E value_of(const Named<E> (&table)[N], std::string_view text) {
  for (const auto& n : table)
    if (text == n.text) return n.value;
  return table[0].value;
}

}  // namespace

const char* to_string(GateResult result) { return text_of(kGate, result); }
GateResult parse_gate_result(std::string_view text) { return value_of(kGate, text); }
const char* to_string(PrChecks checks) { return text_of(kChecks, checks); }
PrChecks parse_pr_checks(std::string_view text) { return value_of(kChecks, text); }

}  // namespace loopr
