// Strongly typed physical quantities: bytes, FLOPs, seconds and their rates.
//
// A Quantity carries the exponents of its three base dimensions (bytes, floating-point
// operations, seconds) in its type, so only physically meaningful arithmetic compiles:
// Bytes / ByteRate is Seconds, Flops / Seconds is FlopRate, Bytes + Seconds is an error.
// Values are stored in base units (B, FLOP, s) as double.
#pragma once

#include <cmath>
#include <compare>

namespace twocs::units {

template <int ByteExp, int FlopExp, int SecondExp> class Quantity {
public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double base_value) : value_(base_value) {}

  /// The value in base units (bytes, FLOPs, seconds, or their quotients).
  [[nodiscard]] constexpr double value() const { return value_; }

  constexpr Quantity& operator+=(Quantity other) {
    value_ += other.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity other) {
    value_ -= other.value_;
    return *this;
  }
  constexpr Quantity& operator*=(double factor) {
    value_ *= factor;
    return *this;
  }
  constexpr Quantity& operator/=(double divisor) {
    value_ /= divisor;
    return *this;
  }

  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.value_ + b.value_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.value_ - b.value_); }
  friend constexpr Quantity operator-(Quantity a) { return Quantity(-a.value_); }
  friend constexpr Quantity operator*(Quantity a, double f) { return Quantity(a.value_ * f); }
  friend constexpr Quantity operator*(double f, Quantity a) { return Quantity(a.value_ * f); }
  friend constexpr Quantity operator/(Quantity a, double d) { return Quantity(a.value_ / d); }
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads a defaulted operator<=>
  friend constexpr auto operator<=>(Quantity a, Quantity b) = default;

private:
  double value_ = 0.0;
};

namespace detail {
template <int B, int F, int S> constexpr auto make(double v) {
  if constexpr (B == 0 && F == 0 && S == 0) {
    return v; // a ratio of like quantities is a plain number
  } else {
    return Quantity<B, F, S>(v);
  }
}
} // namespace detail

template <int B1, int F1, int S1, int B2, int F2, int S2>
constexpr auto operator*(Quantity<B1, F1, S1> a, Quantity<B2, F2, S2> b) {
  return detail::make<B1 + B2, F1 + F2, S1 + S2>(a.value() * b.value());
}

template <int B1, int F1, int S1, int B2, int F2, int S2>
constexpr auto operator/(Quantity<B1, F1, S1> a, Quantity<B2, F2, S2> b) {
  return detail::make<B1 - B2, F1 - F2, S1 - S2>(a.value() / b.value());
}

template <int B, int F, int S> constexpr auto operator/(double a, Quantity<B, F, S> b) {
  return Quantity<-B, -F, -S>(a / b.value());
}

using Bytes = Quantity<1, 0, 0>;
using Flops = Quantity<0, 1, 0>;
using Seconds = Quantity<0, 0, 1>;
using ByteRate = Quantity<1, 0, -1>;            // bytes per second (bandwidth)
using FlopRate = Quantity<0, 1, -1>;            // FLOP per second (throughput)
using ArithmeticIntensity = Quantity<-1, 1, 0>; // FLOP per byte

template <int B, int F, int S> constexpr Quantity<B, F, S> max(Quantity<B, F, S> a, Quantity<B, F, S> b) {
  return a < b ? b : a;
}
template <int B, int F, int S> constexpr Quantity<B, F, S> min(Quantity<B, F, S> a, Quantity<B, F, S> b) {
  return b < a ? b : a;
}
template <int B, int F, int S> constexpr Quantity<B, F, S> abs(Quantity<B, F, S> a) {
  return Quantity<B, F, S>(a.value() < 0 ? -a.value() : a.value());
}

/// Construction helpers that name the unit at the call site.
constexpr Bytes bytes(double v) { return Bytes(v); }
constexpr Flops flops(double v) { return Flops(v); }
constexpr Seconds seconds(double v) { return Seconds(v); }
constexpr ByteRate bytes_per_second(double v) { return ByteRate(v); }
constexpr FlopRate flops_per_second(double v) { return FlopRate(v); }

namespace literals {
// clang-format off
constexpr Bytes operator""_B(long double v) { return Bytes(static_cast<double>(v)); }
constexpr Bytes operator""_B(unsigned long long v) { return Bytes(static_cast<double>(v)); }
constexpr Bytes operator""_kB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e3); }
constexpr Bytes operator""_MB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e6); }
constexpr Bytes operator""_GB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e9); }
constexpr Bytes operator""_GB(long double v) { return Bytes(static_cast<double>(v) * 1e9); }
constexpr Bytes operator""_KiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1024.0); }
constexpr Bytes operator""_MiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1048576.0); }
constexpr Bytes operator""_GiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1073741824.0); }
constexpr Seconds operator""_s(long double v) { return Seconds(static_cast<double>(v)); }
constexpr Seconds operator""_s(unsigned long long v) { return Seconds(static_cast<double>(v)); }
constexpr Seconds operator""_ms(long double v) { return Seconds(static_cast<double>(v) * 1e-3); }
constexpr Seconds operator""_ms(unsigned long long v) { return Seconds(static_cast<double>(v) * 1e-3); }
constexpr Seconds operator""_us(long double v) { return Seconds(static_cast<double>(v) * 1e-6); }
constexpr Seconds operator""_us(unsigned long long v) { return Seconds(static_cast<double>(v) * 1e-6); }
constexpr Seconds operator""_ns(unsigned long long v) { return Seconds(static_cast<double>(v) * 1e-9); }
constexpr Flops operator""_FLOP(unsigned long long v) { return Flops(static_cast<double>(v)); }
constexpr Flops operator""_GFLOP(unsigned long long v) { return Flops(static_cast<double>(v) * 1e9); }
constexpr Flops operator""_TFLOP(unsigned long long v) { return Flops(static_cast<double>(v) * 1e12); }
constexpr ByteRate operator""_GBps(unsigned long long v) { return ByteRate(static_cast<double>(v) * 1e9); }
constexpr ByteRate operator""_GBps(long double v) { return ByteRate(static_cast<double>(v) * 1e9); }
constexpr FlopRate operator""_TFLOPps(unsigned long long v) { return FlopRate(static_cast<double>(v) * 1e12); }
constexpr FlopRate operator""_TFLOPps(long double v) { return FlopRate(static_cast<double>(v) * 1e12); }
// clang-format on
} // namespace literals

} // namespace twocs::units
