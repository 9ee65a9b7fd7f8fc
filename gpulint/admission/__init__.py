"""`gpulint policy export`: the rules' admission forms as a ValidatingAdmissionPolicy or a Kyverno policy."""
