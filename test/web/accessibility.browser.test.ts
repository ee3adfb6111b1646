// Every page at desktop size and on a 390 × 844 phone (test/helpers/accessibility-tour.ts).
import { accessibilityTour } from '../helpers/accessibility-tour.ts';

accessibilityTour([
  { label: 'desktop', width: 1200, height: 800 },
  { label: 'phone', width: 390, height: 844 },
]);
