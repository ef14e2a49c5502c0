/* SPDX-License-Identifier: Apache-2.0 */
/* STGUARD_API marks every declaration that belongs to stguard's public API, C and C++.
 *
 * The library is compiled with hidden visibility (-fvisibility=hidden
 * -fvisibility-inlines-hidden), so a shared build exports exactly the declarations that
 * carry this macro and nothing else: internal stages (the header parser, the atomic file,
 * testing hooks) stay private to the library. In a static build the attribute is harmless.
 * This header is valid C99 and C++. */
#ifndef STGUARD_EXPORT_H_
#define STGUARD_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define STGUARD_API __attribute__((visibility("default")))
#else
#define STGUARD_API
#endif

#endif /* STGUARD_EXPORT_H_ */
