#pragma once
/// What each IR node kind is, declared once (as MLIR declares an op once in
/// ODS): its operands, its payload (what besides operands and type makes two
/// nodes the same value) and its mnemonic in the printed form. The verifier,
/// the rewriter, CSE, the kernel cache key, the printer and the parser read
/// these; a new node kind is added here and nowhere else needs a list.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "compiler/ir/ir.h"

namespace policy::ir {

/// Calls f(id) on every operand id of `n` (an IR node struct, const or
/// not), in operand order.
template <typename N, typename F>
void ForOperandsOf(N& n, F&& f) {
  using T = std::remove_const_t<N>;
  if constexpr (std::is_same_v<T, LoadField>) f(n.object);
  if constexpr (std::is_same_v<T, Index>) f(n.object), f(n.key);
  if constexpr (std::is_same_v<T, Not> || std::is_same_v<T, Negate> || std::is_same_v<T, IntToQuantity>) f(n.operand);
  if constexpr (std::is_same_v<T, Arith> || std::is_same_v<T, Compare> || std::is_same_v<T, And> ||
                std::is_same_v<T, Or>) {
    f(n.lhs), f(n.rhs);
  }
  if constexpr (std::is_same_v<T, Member>) f(n.element), f(n.collection);
  if constexpr (std::is_same_v<T, Coalesce>) f(n.value), f(n.fallback);
  if constexpr (std::is_same_v<T, Select>) f(n.condition), f(n.then_value), f(n.else_value);
  if constexpr (std::is_same_v<T, Loop>) {
    f(n.collection);
    if (n.body) f(*n.body);
  }
  if constexpr (std::is_same_v<T, MakeList>) {
    for (auto& e : n.elements) f(e);
  }
  if constexpr (std::is_same_v<T, CallBuiltin>) {
    for (auto& a : n.args) f(a);
  }
}

/// Calls f(id) on every operand of `node` (NodeId& for a mutable node, so
/// f may rename it).
template <typename NodeT, typename F>
void VisitOperands(NodeT& node, F&& f) {
  std::visit([&](auto& n) { ForOperandsOf(n, f); }, node);
}

/// Feeds the payload of `node` (not its operands, type or span) to `sink`,
/// which has Int(uint64_t) and Text(std::string_view). Equal payloads,
/// operands and types make equal values.
template <typename Sink>
void VisitPayload(const Node& node, Sink&& sink) {
  sink.Int(node.index());
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, BoolConst>) sink.Int(n.value);
        if constexpr (std::is_same_v<T, IntConst>) sink.Int(static_cast<uint64_t>(n.value));
        if constexpr (std::is_same_v<T, StringConst>) sink.Text(n.value);
        if constexpr (std::is_same_v<T, LoadField>) sink.Int(static_cast<uint64_t>(n.field));
        if constexpr (std::is_same_v<T, Local>) sink.Int(n.slot);
        if constexpr (std::is_same_v<T, Arith>) sink.Int(static_cast<uint64_t>(n.op));
        if constexpr (std::is_same_v<T, Compare>) sink.Int(static_cast<uint64_t>(n.op));
        if constexpr (std::is_same_v<T, Loop>) {
          sink.Int(static_cast<uint64_t>(n.kind));
          sink.Int(n.first);
          sink.Int(n.second ? uint64_t{*n.second} + 1 : 0);
          sink.Int(n.body.has_value());
        }
        if constexpr (std::is_same_v<T, MakeList>) sink.Int(n.is_set);
        if constexpr (std::is_same_v<T, CallBuiltin>) sink.Int(static_cast<uint64_t>(n.builtin));
        if constexpr (std::is_same_v<T, LabelIn>) {
          sink.Text(n.key);
          sink.Int(n.domains.size());
          for (uint32_t d : n.domains) sink.Int(d);
        }
        if constexpr (std::is_same_v<T, TaintScan>) {
          sink.Int(static_cast<uint64_t>(n.kind));
          sink.Int(n.taints.size());
          for (uint32_t t : n.taints) sink.Int(t);
        }
      },
      node);
}

// --- the printed form's words --------------------------------------------

/// The mnemonic of node kinds with a fixed one (Arith, Compare, Loop and
/// TaintScan take theirs from their op or kind: Name() below).
template <typename T> inline constexpr std::string_view kMnemonic = "";
template <> inline constexpr std::string_view kMnemonic<NoneConst> = "none";
template <> inline constexpr std::string_view kMnemonic<IntConst> = "const";
template <> inline constexpr std::string_view kMnemonic<StringConst> = "const";
template <> inline constexpr std::string_view kMnemonic<PodRoot> = "pod";
template <> inline constexpr std::string_view kMnemonic<NodeRoot> = "node";
template <> inline constexpr std::string_view kMnemonic<LoadField> = "load";
template <> inline constexpr std::string_view kMnemonic<Index> = "index";
template <> inline constexpr std::string_view kMnemonic<Local> = "local";
template <> inline constexpr std::string_view kMnemonic<Not> = "not";
template <> inline constexpr std::string_view kMnemonic<Negate> = "neg";
template <> inline constexpr std::string_view kMnemonic<Member> = "member";
template <> inline constexpr std::string_view kMnemonic<And> = "and";
template <> inline constexpr std::string_view kMnemonic<Or> = "or";
template <> inline constexpr std::string_view kMnemonic<Coalesce> = "coalesce";
template <> inline constexpr std::string_view kMnemonic<Select> = "select";
template <> inline constexpr std::string_view kMnemonic<IntToQuantity> = "to_quantity";
template <> inline constexpr std::string_view kMnemonic<LabelIn> = "label_in";
template <> inline constexpr std::string_view kMnemonic<CallBuiltin> = "call";
/// TaintScan's mnemonic is this followed by its kind's name.
inline constexpr std::string_view kTaintScanPrefix = "taints_";

inline constexpr std::array<std::string_view, 5> kArithNames = {"add", "sub", "mul", "div", "mod"};
inline constexpr std::array<std::string_view, 6> kCompareNames = {"eq", "ne", "lt", "le", "gt", "ge"};
inline constexpr std::array<std::string_view, 5> kLoopNames = {"any", "all", "sum", "count", "first"};

inline std::string_view Name(ArithOp op) { return kArithNames[static_cast<size_t>(op)]; }
inline std::string_view Name(CompareOp op) { return kCompareNames[static_cast<size_t>(op)]; }
inline std::string_view Name(LoopKind kind) { return kLoopNames[static_cast<size_t>(kind)]; }

/// The enum value a name stands for (Name's inverse).
template <typename Enum, size_t N>
std::optional<Enum> FromName(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace policy::ir
