#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# version_script_test.sh CXX VERSION_SCRIPT: tests cmake/stguard.map on its own, whatever the
# compiler inlines. Whether a real build leaks a template instantiation depends on the
# compiler and the optimisation level (clang at -O0 emits std::to_address<stguard::TensorView>
# with default visibility, gcc usually inlines it), so the install test alone would pass or
# fail by accident. Here a small shared library is linked with the script, holding what
# it must export (a function, a const member function, a ref-qualified one, a variable, a
# class's vtable and typeinfo in namespace stguard, a C function stguard_*) and what it must
# not (default-visible template functions in another namespace whose demangled names begin
# with a stguard return type, as std::to_address<stguard::TensorView> does, and an
# unprefixed C function). Exit status 0 when exactly the first group is exported.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 CXX VERSION_SCRIPT" >&2; exit 2; }
cxx=$1
script=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/library.cc" <<'EOF'
#define EXPORTED __attribute__((visibility("default")))
namespace stguard {
struct EXPORTED Sink {
  virtual ~Sink();
  virtual int Write(int) = 0;
  int Count() const;
  int Take() &&;
};
Sink::~Sink() = default;
int Sink::Count() const { return 1; }
int Sink::Take() && { return 2; }
EXPORTED int Answer() { return 42; }
EXPORTED extern const int kLimit = 7;
}  // namespace stguard
extern "C" EXPORTED int stguard_answer(void) { return stguard::Answer(); }
extern "C" EXPORTED int helper_answer(void) { return 0; }
// A library outside stguard with explicitly visible templates, as libstdc++'s namespace std.
namespace other {
template <class T> EXPORTED T* Address(T* p) { return p; }
template <class T> EXPORTED T&& Forward(T& t) { return static_cast<T&&>(t); }
template stguard::Sink* Address<stguard::Sink>(stguard::Sink*);
template stguard::Sink&& Forward<stguard::Sink>(stguard::Sink&);
}  // namespace other
EOF
"$cxx" -std=c++20 -O0 -fPIC -fvisibility=hidden -shared -o "$work/libtest.so" \
  "$work/library.cc" "-Wl,--version-script=$script"
nm -D --defined-only "$work/libtest.so" | awk '{ print $3 }' | c++filt > "$work/exported"
cat "$work/exported"

fail() { echo "version_script_test: $*" >&2; exit 1; }
for name in 'stguard::Answer()' 'stguard::Sink::Count() const' 'stguard::Sink::Take() &&' \
            'stguard::kLimit' 'vtable for stguard::Sink' 'typeinfo for stguard::Sink' \
            'typeinfo name for stguard::Sink' 'stguard::Sink::~Sink()' 'stguard_answer'; do
  grep -qxF "$name" "$work/exported" || fail "did not export $name"
done
for name in 'stguard::Sink* other::Address<stguard::Sink>(stguard::Sink*)' \
            'stguard::Sink&& other::Forward<stguard::Sink>(stguard::Sink&)' 'helper_answer'; do
  grep -qxF "$name" "$work/exported" && fail "exported $name"
done
echo "version_script_test: ok"
