package channelfeed

import "reconcile"

// checkHeader refuses a header with a field that reconcile.TextFault refuses,
// naming the field by its place.
func (o Options) checkHeader(line int, fields []string) error {
	for i, s := range fields {
		if why := reconcile.TextFault(s); why != "" {
			return o.errorf(line, "", "header field %d: %s", i+1, why)
		}
	}
	return nil
}

// checkRow refuses a row with a field that reconcile.TextFault refuses, naming the
// field by its header name in names, or by its place when it has none.
func (o Options) checkRow(line int, fields, names []string) error {
	for i, s := range fields {
		if why := reconcile.TextFault(s); why != "" {
			if i < len(names) && names[i] != "" {
				return o.errorf(line, names[i], "%s", why)
			}
			return o.errorf(line, "", "field %d: %s", i+1, why)
		}
	}
	return nil
}
