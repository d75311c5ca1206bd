# SPDX-License-Identifier: Apache-2.0
# Writes OUTPUT, a C file defining `const char <NAME>[]` as the bytes of INPUT and a NUL:
# the kernel source ships inside the driver.
file(READ ${INPUT} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUTPUT} "/* Generated from ${INPUT} by embed.cmake. */\n"
     "const char ${NAME}[] = {${bytes}0x00};\n")
