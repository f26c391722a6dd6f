"""Prints the device code images embedded in a host module (the constant
globals `<module>_image` of --dtensor-gpu-launch-to-runtime), each after a
line `// image <module>`. Used on PTX images (format=isa), which are text."""
import re
import sys

text = open(sys.argv[1]).read()
images = re.findall(
    r'llvm\.mlir\.global internal constant @(\w+)_image\("((?:[^"\\]|\\.)*)"\)',
    text)
if not images:
    sys.exit("no embedded images in " + sys.argv[1])
for name, escaped in images:
    data = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)),
                  escaped)
    print("// image " + name)
    print(data.rstrip("\0"))
