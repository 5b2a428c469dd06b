export const routes = ["/", "/accounts", "/invoices"];
