#include "k8s/quantity.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace policy::k8s {
namespace {

constexpr uint32_t kLimbBase = 1000000000;

// An unsigned integer of any size in base-1e9 limbs, least significant first.
// Only the slow path of parsing uses it (more than 18 digits, or exponents).
class BigNat {
 public:
  explicit BigNat(std::string_view digits) {
    for (size_t end = digits.size(); end > 0;) {
      size_t begin = end >= 9 ? end - 9 : 0;
      uint32_t limb = 0;
      for (size_t i = begin; i < end; ++i) limb = limb * 10 + static_cast<uint32_t>(digits[i] - '0');
      limbs_.push_back(limb);
      end = begin;
    }
    Trim();
  }

  bool IsZero() const { return limbs_.empty(); }

  void Multiply(uint32_t factor) {
    uint64_t carry = 0;
    for (uint32_t& limb : limbs_) {
      uint64_t v = static_cast<uint64_t>(limb) * factor + carry;
      limb = static_cast<uint32_t>(v % kLimbBase);
      carry = v / kLimbBase;
    }
    while (carry != 0) {
      limbs_.push_back(static_cast<uint32_t>(carry % kLimbBase));
      carry /= kLimbBase;
    }
  }

  // Divides in place; returns whether the remainder was non-zero.
  bool Divide(uint32_t divisor) {
    uint64_t rem = 0;
    for (size_t i = limbs_.size(); i-- > 0;) {
      uint64_t v = rem * kLimbBase + limbs_[i];
      limbs_[i] = static_cast<uint32_t>(v / divisor);
      rem = v % divisor;
    }
    Trim();
    return rem != 0;
  }

  // The value if it is at most `limit`, else nullopt.
  std::optional<Quantity::Nanos> AtMost(Quantity::Nanos limit) const {
    if (limbs_.size() > 4) return std::nullopt;  // >= 1e36 > any limit used here
    Quantity::Nanos v = 0;
    for (size_t i = limbs_.size(); i-- > 0;) v = v * kLimbBase + limbs_[i];
    if (v > limit) return std::nullopt;
    return v;
  }

 private:
  void Trim() {
    while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
  }
  std::vector<uint32_t> limbs_;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

struct Suffix {
  int32_t base = 10;  // 10 or 2
  int32_t exponent = 0;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};

// quantitySuffixer.interpret: decimal SI, then binary SI, then `e<int>`.
std::optional<Suffix> InterpretSuffix(std::string_view s) {
  static constexpr std::pair<std::string_view, int32_t> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static constexpr std::pair<std::string_view, int32_t> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  for (auto [name, exp] : kDecimal) {
    if (s == name) return Suffix{10, exp, QuantityFormat::kDecimalSI};
  }
  for (auto [name, exp] : kBinary) {
    if (s == name) return Suffix{2, exp, QuantityFormat::kBinarySI};
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    // strconv.ParseInt(s[1:], 10, 64), then truncated to int32 as Kubernetes does.
    std::string_view digits = s.substr(1);
    bool negative = false;
    if (digits[0] == '+' || digits[0] == '-') {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty() || digits.size() > 19) return std::nullopt;
    unsigned __int128 v = 0;
    for (char c : digits) {
      if (!IsDigit(c)) return std::nullopt;
      v = v * 10 + static_cast<unsigned>(c - '0');
    }
    if (v > (negative ? static_cast<unsigned __int128>(INT64_MAX) + 1 : INT64_MAX)) return std::nullopt;
    int64_t parsed = negative ? static_cast<int64_t>(-static_cast<__int128>(v)) : static_cast<int64_t>(v);
    return Suffix{10, static_cast<int32_t>(static_cast<uint32_t>(parsed)), QuantityFormat::kDecimalExponent};
  }
  return std::nullopt;
}

void SetWhy(std::string* why, std::string text) {
  if (why != nullptr) *why = std::move(text);
}

int64_t RoundUpDivide(Quantity::Nanos nanos, int64_t divisor) {
  Quantity::Nanos q = nanos / divisor;
  if (nanos % divisor != 0) q += nanos > 0 ? 1 : -1;
  if (q > INT64_MAX) return INT64_MAX;
  if (q < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(q);
}

}  // namespace

Quantity Quantity::FromNanos(Nanos nanos, QuantityFormat format) {
  Quantity q;
  q.nanos_ = std::clamp(nanos, -kMaxNanos, kMaxNanos);
  q.format_ = format;
  return q;
}

std::optional<Quantity> Quantity::Parse(std::string_view str, std::string* why) {
  if (str.empty()) {
    SetWhy(why, "a quantity cannot be empty");
    return std::nullopt;
  }
  // parseQuantityString: sign, leading zeros, numerator, `.` denominator, suffix.
  size_t pos = 0;
  const size_t end = str.size();
  bool positive = true;
  if (str[0] == '-' || str[0] == '+') {
    positive = str[0] == '+';
    ++pos;
  }
  while (pos < end && str[pos] == '0') ++pos;
  size_t num_begin = pos;
  while (pos < end && IsDigit(str[pos])) ++pos;
  std::string_view num = str.substr(num_begin, pos - num_begin);
  std::string_view denom;
  if (pos < end && str[pos] == '.') {
    size_t denom_begin = ++pos;
    while (pos < end && IsDigit(str[pos])) ++pos;
    denom = str.substr(denom_begin, pos - denom_begin);
  }
  size_t suffix_begin = pos;
  while (pos < end && std::string_view("eEinumkKMGTP").find(str[pos]) != std::string_view::npos) ++pos;
  if (pos < end && (str[pos] == '-' || str[pos] == '+')) ++pos;
  while (pos < end && IsDigit(str[pos])) ++pos;
  if (pos < end) {
    SetWhy(why, fmt::format("unexpected `{}` at position {}", str[pos], pos + 1));
    return std::nullopt;
  }
  std::string_view suffix_text = str.substr(suffix_begin);
  std::optional<Suffix> suffix = InterpretSuffix(suffix_text);
  if (!suffix) {
    SetWhy(why, fmt::format("unknown suffix `{}`", suffix_text));
    return std::nullopt;
  }

  // value = (num.denom) * base^exponent, held in nanounits, rounded up.
  std::string digits;
  digits.reserve(num.size() + denom.size());
  digits.append(num).append(denom);
  size_t first = digits.find_first_not_of('0');
  digits.erase(0, first == std::string::npos ? digits.size() : first);
  int64_t shift = 9 - static_cast<int64_t>(denom.size());
  if (suffix->base == 10) shift += suffix->exponent;

  Nanos nanos = 0;
  bool exact_fast = digits.size() <= 18 && suffix->base == 10 && shift >= 0 && shift + digits.size() <= 29;
  if (digits.empty()) {
    nanos = 0;
  } else if (exact_fast) {
    for (char c : digits) nanos = nanos * 10 + (c - '0');
    for (int64_t i = 0; i < shift; ++i) nanos *= 10;
    nanos = std::min(nanos, kMaxNanos);
  } else {
    BigNat big(digits);
    if (suffix->base == 2) {
      for (int32_t i = 0; i < suffix->exponent; i += 10) big.Multiply(1024);
    }
    bool inexact = false;
    bool capped = false;
    for (int64_t i = 0; i < shift && !capped; ++i) {
      big.Multiply(10);
      capped = !big.AtMost(kMaxNanos).has_value();
    }
    for (int64_t i = shift; i < 0 && !big.IsZero(); ++i) {
      if (i + 9 <= 0) {
        inexact |= big.Divide(kLimbBase);
        i += 8;
      } else {
        inexact |= big.Divide(10);
      }
    }
    std::optional<Nanos> value = capped ? std::nullopt : big.AtMost(kMaxNanos);
    nanos = value ? *value : kMaxNanos;
    if (inexact && nanos < kMaxNanos) ++nanos;
  }
  QuantityFormat format = suffix->format;
  // Kubernetes: a binary quantity below one unit prints in decimal.
  if (format == QuantityFormat::kBinarySI && nanos < 1000000000) format = QuantityFormat::kDecimalSI;
  return FromNanos(positive ? nanos : -nanos, format);
}

int64_t Quantity::Value() const { return RoundUpDivide(nanos_, 1000000000); }
int64_t Quantity::MilliValue() const { return RoundUpDivide(nanos_, 1000000); }

Quantity& Quantity::operator+=(const Quantity& other) {
  *this = FromNanos(nanos_ + other.nanos_, format_);
  return *this;
}

std::string Quantity::ToString() const {
  bool negative = nanos_ < 0;
  unsigned __int128 n = negative ? -static_cast<unsigned __int128>(nanos_) : nanos_;
  auto print = [](unsigned __int128 v) {
    std::string s;
    do {
      s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
      v /= 10;
    } while (v != 0);
    return s;
  };
  std::string out = negative ? "-" : "";
  if (n % 1000000000 != 0) {
    static constexpr std::pair<const char*, unsigned> kFine[] = {{"m", 1000000}, {"u", 1000}, {"n", 1}};
    for (auto [suffix, scale] : kFine) {
      if (n % scale == 0) return out + print(n / scale) + suffix;
    }
  }
  unsigned __int128 units = n / 1000000000;
  if (format_ == QuantityFormat::kBinarySI && units != 0) {
    static constexpr const char* kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int i = 0;
    while (i < 6 && units % 1024 == 0) {
      units /= 1024;
      ++i;
    }
    return out + print(units) + kBinary[i];
  }
  static constexpr const char* kDecimal[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (i < 6 && units != 0 && units % 1000 == 0) {
    units /= 1000;
    ++i;
  }
  return out + print(units) + kDecimal[i];
}

int64_t SchedulerUnits(std::string_view name, const Quantity& quantity) {
  return name == "cpu" ? quantity.MilliValue() : quantity.Value();
}

int64_t SchedulerUnitsToMilli(std::string_view name, int64_t units) {
  return name == "cpu" ? units : SaturatedMilli(units);
}

int64_t SaturatedMilli(int64_t units) {
  __int128 v = static_cast<__int128>(units) * 1000;
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

bool BytesResource(std::string_view name) {
  return name == "memory" || name == "ephemeral-storage" || name.starts_with("hugepages-");
}

std::string WrittenAmount(std::string_view name, int64_t units) {
  if (name == "cpu") return Quantity::FromMilli(units).ToString();
  QuantityFormat format = BytesResource(name) ? QuantityFormat::kBinarySI : QuantityFormat::kDecimalSI;
  return Quantity::FromNanos(static_cast<Quantity::Nanos>(units) * 1000000000, format).ToString();
}

std::string ReadableAmount(std::string_view name, int64_t units) {
  if (name == "cpu") {
    std::string cores = fmt::format("{:.2f}", static_cast<double>(units) / 1000);
    while (cores.back() == '0') cores.pop_back();
    if (cores.back() == '.') cores.pop_back();
    return cores;
  }
  if (!BytesResource(name)) return WrittenAmount(name, units);
  constexpr const char* kSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  double value = static_cast<double>(units);
  size_t at = 0;
  while ((value >= 1024 || value <= -1024) && at + 1 < std::size(kSuffixes)) {
    value /= 1024;
    ++at;
  }
  if (at == 0) return fmt::format("{}", units);
  if (value == static_cast<double>(static_cast<int64_t>(value))) return fmt::format("{}{}", static_cast<int64_t>(value), kSuffixes[at]);
  return fmt::format("{:.1f}{}", value, kSuffixes[at]);
}

}  // namespace policy::k8s
