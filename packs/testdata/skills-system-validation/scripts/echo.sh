#!/bin/sh
# Prints the step 6 marker followed by the arguments.
echo "SKILLS-SYSTEM-VALIDATION-SCRIPT-5b11 $*"
